//! Response decoding: gzip and brotli across frames, truncated and corrupt bodies, which encodings
//! are decoded.

use super::*;
use http_body_util::{BodyExt, StreamBody};

type Frames = futures_util::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, std::io::Error>>>;

fn body(chunks: Vec<Vec<u8>>) -> Decoded<StreamBody<Frames>> {
    let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = chunks
        .into_iter()
        .map(|c| Ok(Frame::data(Bytes::from(c))))
        .collect();
    Decoded::new(
        StreamBody::new(futures_util::stream::iter(frames)),
        Encoding::Gzip,
    )
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

#[test]
fn only_gzip_and_brotli_are_decoded_and_their_headers_removed() {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_ENCODING, "GZip".parse().unwrap());
    headers.insert(CONTENT_LENGTH, "12".parse().unwrap());
    assert_eq!(
        Encoding::take_from(&mut headers).unwrap(),
        Some(Encoding::Gzip)
    );
    assert!(headers.is_empty());
    headers.insert(CONTENT_ENCODING, "br".parse().unwrap());
    assert_eq!(
        Encoding::take_from(&mut headers).unwrap(),
        Some(Encoding::Brotli)
    );
    headers.insert(CONTENT_ENCODING, "identity".parse().unwrap());
    assert_eq!(Encoding::take_from(&mut headers).unwrap(), None);
    headers.insert(CONTENT_ENCODING, "zstd".parse().unwrap());
    let error = Encoding::take_from(&mut headers).unwrap_err();
    assert!(error
        .reason
        .as_deref()
        .unwrap()
        .contains("Content-Encoding \"zstd\""));
}
