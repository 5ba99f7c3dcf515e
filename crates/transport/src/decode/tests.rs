//! Response decoding: gzip and brotli across frames, truncated and corrupt bodies, which encodings
//! are decoded.

use super::*;
use http_body_util::{BodyExt, StreamBody};

type Frames = futures_util::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, std::io::Error>>>;

fn body(chunks: Vec<Vec<u8>>) -> Decoded<StreamBody<Frames>> {
    encoded_body(chunks, Encoding::Gzip)
}

fn encoded_body(chunks: Vec<Vec<u8>>, encoding: Encoding) -> Decoded<StreamBody<Frames>> {
    let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = chunks
        .into_iter()
        .map(|c| Ok(Frame::data(Bytes::from(c))))
        .collect();
    Decoded::new(
        StreamBody::new(futures_util::stream::iter(frames)),
        encoding,
    )
}

fn from_hex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

async fn frames<B: Body<Data = Bytes> + Unpin>(mut body: B) -> Result<Vec<usize>, B::Error> {
    let mut sizes = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            sizes.push(data.len());
        }
    }
    Ok(sizes)
}

#[tokio::test]
async fn gzip_decodes_across_frames_in_bounded_pieces() {
    let data: Vec<u8> = (0..200_000u32)
        .flat_map(|i| (i % 251).to_le_bytes())
        .collect();
    let compressed = gzip(&data);
    let split = compressed.len() / 3;
    let decoded = body(vec![
        compressed[..split].to_vec(),
        compressed[split..].to_vec(),
    ])
    .collect()
    .await
    .unwrap()
    .to_bytes();
    assert_eq!(decoded.as_ref(), data.as_slice());
    let sizes = frames(body(vec![gzip(&vec![0u8; 10_000_000])]))
        .await
        .unwrap();
    assert!(
        sizes.iter().all(|&n| n <= 4 * CHUNK),
        "a bomb comes out in pieces: {:?}",
        sizes.iter().max()
    );
    assert_eq!(sizes.iter().sum::<usize>(), 10_000_000);
}

/// A brotli body that decodes to more than one step's output: the decoder takes all of a small
/// input at once and holds the rest of its output, which must come out before the body ends
/// (it used to be reported as a truncated stream, for every brotli answer above 32 KiB).
#[tokio::test]
async fn brotli_decodes_past_one_step_of_output_in_bounded_pieces() {
    // `zlib.brotliCompressSync(Buffer.alloc(100000, 'a'))` in Node: 14 bytes.
    let letters = from_hex("5b9f86815f222c1e0b04b2fc0200");
    let whole = vec![letters.clone()];
    let byte_by_byte = letters.iter().map(|&b| vec![b]).collect();
    for (name, chunks) in [("one frame", whole), ("a frame per byte", byte_by_byte)] {
        let decoded = encoded_body(chunks, Encoding::Brotli)
            .collect()
            .await
            .unwrap()
            .to_bytes();
        assert_eq!(decoded.as_ref(), vec![b'a'; 100_000].as_slice(), "{name}");
    }
    // `zlib.brotliCompressSync(Buffer.alloc(10_000_000))`: a bomb of 27 bytes.
    let zeros = from_hex("cbffff3ff82700e2b14020f7fe2fff2c31f04f00c46111808e2306");
    let sizes = frames(encoded_body(vec![zeros], Encoding::Brotli))
        .await
        .unwrap();
    assert!(
        sizes.iter().all(|&n| n <= CHUNK),
        "{:?}",
        sizes.iter().max()
    );
    assert_eq!(sizes.iter().sum::<usize>(), 10_000_000);
}

#[tokio::test]
async fn truncated_corrupt_and_trailing_data_fail() {
    let compressed = gzip(b"{\"data\":{\"Media\":{\"id\":1}}}");
    let truncated = compressed[..compressed.len() - 4].to_vec();
    let mut flipped = compressed.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0xff;
    let mut trailing = compressed.clone();
    trailing.extend_from_slice(b"garbage!!!");
    for (name, bytes) in [
        ("truncated", truncated),
        ("corrupt", flipped),
        ("trailing", trailing),
        ("not gzip", b"plain text".to_vec()),
    ] {
        let error = body(vec![bytes])
            .collect()
            .await
            .map(|_| ())
            .expect_err(name);
        assert!(
            error
                .to_string()
                .starts_with("the gzip response body could not be decoded: "),
            "{name}: {error}"
        );
    }
}

#[tokio::test]
async fn an_empty_body_needs_no_decoding() {
    assert!(body(vec![]).collect().await.unwrap().to_bytes().is_empty());
}

/// Headers with one `Content-Encoding` line per value.
fn encoded_as(lines: &[&str]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for line in lines {
        headers.append(CONTENT_ENCODING, line.parse().unwrap());
    }
    headers
}

#[test]
fn only_gzip_and_brotli_are_decoded_and_their_headers_removed() {
    let mut headers = encoded_as(&["GZip"]);
    headers.insert(CONTENT_LENGTH, "12".parse().unwrap());
    assert_eq!(Encoding::take_from(&mut headers).unwrap(), [Encoding::Gzip]);
    assert!(headers.is_empty());
    assert_eq!(
        Encoding::take_from(&mut encoded_as(&["br"])).unwrap(),
        [Encoding::Brotli]
    );
    let mut identity = encoded_as(&["identity"]);
    assert_eq!(Encoding::take_from(&mut identity).unwrap(), []);
    assert!(
        identity.contains_key(CONTENT_ENCODING),
        "nothing was decoded"
    );
    let error = Encoding::take_from(&mut encoded_as(&["zstd"])).unwrap_err();
    assert!(error
        .reason
        .as_deref()
        .unwrap()
        .contains("Content-Encoding \"zstd\""));
}

#[test]
fn every_content_encoding_line_is_one_list_in_the_order_applied() {
    use Encoding::{Brotli, Gzip};
    for (lines, codings) in [
        (&["gzip", "gzip"][..], &[Gzip, Gzip][..]),
        (&["identity", "gzip"], &[Gzip]),
        (&["gzip, br"], &[Gzip, Brotli]),
        (&["br", " x-gzip ,identity"], &[Brotli, Gzip]),
    ] {
        assert_eq!(
            Encoding::take_from(&mut encoded_as(lines)).unwrap(),
            codings,
            "{lines:?}"
        );
    }
    for lines in [&["gzip", "zstd"][..], &["zstd", "gzip"], &["gzip, deflate"]] {
        let error = Encoding::take_from(&mut encoded_as(lines)).unwrap_err();
        assert!(
            error.reason.as_deref().unwrap().contains("cannot decode"),
            "{lines:?}"
        );
    }
}

#[tokio::test]
async fn layered_codings_are_undone_last_first() {
    let text = b"twice compressed".to_vec();
    // `zlib.brotliCompressSync(zlib.gzipSync("twice compressed"))` in Node.
    let brotli_over_gzip =
        "8b11801f8b08000000000000032b29cf4c4e5548cecf2d284a2d2e4e4d01002310b2a91000000003";
    let brotli = from_hex(brotli_over_gzip);
    for (wire, codings) in [
        (gzip(&gzip(&text)), &[Encoding::Gzip, Encoding::Gzip][..]),
        (brotli, &[Encoding::Gzip, Encoding::Brotli]),
    ] {
        let frames = vec![Ok::<_, std::io::Error>(Frame::data(Bytes::from(wire)))];
        let body = StreamBody::new(futures_util::stream::iter(frames));
        let decoded = decode_all(body, codings)
            .collect()
            .await
            .unwrap()
            .to_bytes();
        assert_eq!(decoded.as_ref(), text.as_slice(), "{codings:?}");
    }
}
