//! Params and fields read where they lie in the caller's JSON text: what the text itself can
//! carry (escapes, spacing, repeated keys, every spelling of a number) reads as the values
//! they stand for, and messages quote a value the same whatever the text looked like.

use super::*;
use crate::json_text::raw;

fn op(key: &str) -> &'static Operation {
    operation(key).unwrap_or_else(|| panic!("{key} is not in the catalog"))
}

/// The path and query (or the problems) of `key` called with `params` and `fields` as text.
fn read(key: &str, params: &str, fields: Option<&str>) -> Result<String, Vec<String>> {
    request_from_text(op(key), Some(raw(params)), fields.map(raw))
        .map(|request| request.path_and_query)
}

fn form(key: &str, params: &str) -> String {
    request_from_text(op(key), Some(raw(params)), None)
        .unwrap_or_else(|problems| panic!("{params}: {problems:?}"))
        .form_body
        .unwrap_or_default()
}

#[test]
fn escapes_in_strings_are_undone_before_encoding() {
    assert_eq!(
        read(
            "anime.search",
            r#"{"q":"one\u0020piece\n\"\\\/\t"}"#,
            Some(r#""i\u0064,title""#)
        ),
        Ok("/anime?q=one%20piece%0A%22%5C%2F%09&fields=id,title".to_owned())
    );
    // An escaped comma is still a comma: the tag is refused, quoted as a value is written.
    assert_eq!(
        read(
            "anime.updateMyListStatus",
            r#"{"id":1,"tags":["a\u002cb"]}"#,
            None
        ),
        Err(vec![
            "Invalid tags[0]: \"a,b\". Expected a string without commas".to_owned()
        ])
    );
    // Escaped keys name the same parameter, and an escaped enum value is the value.
    assert_eq!(
        read(
            "anime.ranking",
            r#"{"r\u0061nkingType":"\u0061iring"}"#,
            None
        ),
        read("anime.ranking", r#"{"rankingType":"airing"}"#, None)
    );
    assert_eq!(
        read(
            "user.get",
            r#"{"username":" \u0040ME "}"#,
            Some(r#"["id"]"#)
        ),
        Ok("/users/@me?fields=id".to_owned())
    );
}

#[test]
fn unicode_reads_the_same_written_or_escaped() {
    for params in [
        r#"{"username":"ünï 😀"}"#,
        r#"{"username":"\u00fcn\u00ef \ud83d\ude00"}"#,
    ] {
        assert_eq!(
            read("user.get", params, Some(r#""id""#)),
            Ok("/users/%C3%BCn%C3%AF%20%F0%9F%98%80?fields=id".to_owned()),
            "{params}"
        );
    }
    assert_eq!(
        form(
            "manga.updateMyListStatus",
            r#"{"id":2,"comments":"日本\u8a9e","tags":["ä","\u00e4"]}"#
        ),
        "tags=%C3%A4%2C%C3%A4&comments=%E6%97%A5%E6%9C%AC%E8%AA%9E"
    );
}

#[test]
fn nested_arrays_in_list_params_are_named_by_index() {
    assert_eq!(
        read(
            "anime.updateMyListStatus",
            r#"{"id":1,"tags":[["a"],"b",[[]],{"c":1}]}"#,
            None
        ),
        Err(vec![
            "Invalid tags[0]: [\"a\"]. Expected a string without commas".to_owned(),
            "Invalid tags[2]: [[]]. Expected a string without commas".to_owned(),
            "Invalid tags[3]: {\"c\":1}. Expected a string without commas".to_owned(),
        ])
    );
    assert_eq!(
        read(
            "anime.get",
            r#"{"id":1}"#,
            Some(r#"[["id"], "title", [ ]]"#)
        ),
        Err(vec![
            "Invalid fields[0]: [\"id\"]. Expected a non-blank field name".to_owned(),
            "Invalid fields[2]: []. Expected a non-blank field name".to_owned(),
        ])
    );
    assert_eq!(
        read("anime.get", r#"{"id":1,"fields":[["id"]]}"#, None),
        Err(vec![
            "Invalid fields[0]: [\"id\"]. Expected a non-blank field name".to_owned()
        ])
    );
    // A list where a scalar is expected is refused whole.
    assert_eq!(
        read("anime.get", r#"{"id":[21]}"#, None),
        Err(vec![
            "Invalid id: [21]. Expected a positive integer".to_owned()
        ])
    );
}

#[test]
fn a_repeated_key_keeps_its_last_value_as_a_serde_json_map_did() {
    assert_eq!(
        read("anime.get", r#"{"id":"x","id":21}"#, Some(r#""id""#)),
        Ok("/anime/21?fields=id".to_owned())
    );
    assert_eq!(
        read("anime.get", r#"{"id":21,"id":"x"}"#, Some(r#""id""#)),
        Err(vec![
            "Invalid id: \"x\". Expected a positive integer".to_owned()
        ])
    );
    assert_eq!(
        read("anime.get", r#"{"id":21,"id":null}"#, None),
        Err(vec!["Missing required variable: id".to_owned()])
    );
    assert_eq!(
        read(
            "anime.get",
            r#"{"id":1,"fields":"title","fields":["id"]}"#,
            None
        ),
        Ok("/anime/1?fields=id".to_owned())
    );
    // The two spellings of a list field are two keys, repeated or not.
    assert_eq!(
        read(
            "anime.updateMyListStatus",
            r#"{"id":1,"score":1,"score":2,"num_watched_episodes":3,"numWatchedEpisodes":4}"#,
            None
        ),
        Err(vec![
            "Conflicting variables: numWatchedEpisodes and num_watched_episodes. Give only one of them"
                .to_owned()
        ])
    );
    // Unknown keys are named once each, in name order, whatever order the text had.
    assert_eq!(
        read("forum.boards", r#"{"zz":1,"aa":2,"zz":3}"#, None),
        Err(vec![
            "Unknown variable: aa".to_owned(),
            "Unknown variable: zz".to_owned()
        ])
    );
}

#[test]
fn every_spelling_of_a_whole_number_is_an_integer() {
    for (spelling, path) in [
        ("21", "/anime/21"),
        ("21.0", "/anime/21"),
        ("2.1e1", "/anime/21"),
        ("1e2", "/anime/100"),
        ("1E+2", "/anime/100"),
        ("9007199254740991", "/anime/9007199254740991"),
        // Written as an integer, a larger one is exact too (JavaScript never writes one).
        ("9007199254740993", "/anime/9007199254740993"),
    ] {
        assert_eq!(
            read(
                "anime.get",
                &format!(r#"{{"id":{spelling}}}"#),
                Some(r#""id""#)
            ),
            Ok(format!("{path}?fields=id")),
            "{spelling}"
        );
    }
    assert_eq!(
        read("anime.search", r#"{"q":"x","limit":1e2,"offset":-0}"#, None),
        Ok("/anime?q=x&limit=100&offset=0".to_owned())
    );
    // Refused values are quoted as a `serde_json` value writes them, as they always were.
    for (spelling, shown) in [
        ("-0", "-0.0"),
        ("2.5", "2.5"),
        ("1e-1", "0.1"),
        ("1e21", "1e+21"),
        ("9007199254740992.0", "9007199254740992.0"),
        ("18446744073709551616", "1.8446744073709552e+19"),
        (r#""21""#, r#""21""#),
    ] {
        assert_eq!(
            read("anime.get", &format!(r#"{{"id":{spelling}}}"#), None),
            Err(vec![format!(
                "Invalid id: {shown}. Expected a positive integer"
            )]),
            "{spelling}"
        );
    }
}

#[test]
fn spacing_in_the_text_changes_nothing() {
    assert_eq!(
        read(
            "anime.get",
            " { \"id\" :\n 21 ,\t\"fields\" : [ \"id\" , \" title \" ] } ",
            None
        ),
        Ok("/anime/21?fields=id,title".to_owned())
    );
    assert_eq!(
        read("anime.get", "[ 1 , 2 ]", None),
        Err(vec!["Invalid params: [1,2]. Expected an object.".to_owned()])
    );
    assert_eq!(
        read("forum.boards", " null ", None),
        read("forum.boards", "{}", None)
    );
    assert_eq!(
        request_from_text(op("forum.boards"), None, None),
        request_from_text(op("forum.boards"), Some(raw("null")), Some(raw("null")))
    );
}

#[test]
fn a_key_that_cannot_be_unescaped_is_refused() {
    // The facade never writes one (it reports lone surrogates, D33); the text can carry it.
    let refused = read("anime.get", r#"{"id":1,"\ud800":2}"#, None).unwrap_err();
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].starts_with("Invalid params: not JSON text ("),
        "{refused:?}"
    );
    assert_eq!(
        read("anime.search", r#"{"q":"\ud800"}"#, None),
        Err(vec![
            r#"Invalid q: "\ud800". Expected a non-blank string"#.to_owned()
        ])
    );
}

#[test]
fn a_big_input_builds_its_whole_request() {
    let tags: Vec<String> = (0..20_000)
        .map(|index| format!("\"tag {index}\""))
        .collect();
    let query = "é".repeat(300_000);
    let params = format!(
        r#"{{"id":1,"comments":"{query}","tags":[{}],"unused":[{}]}}"#,
        tags.join(","),
        tags.join(",")
    );
    assert!(params.len() > 1_000_000, "{} bytes", params.len());
    let request = request_from_text(op("anime.updateMyListStatus"), Some(raw(&params)), None);
    assert_eq!(
        request.as_ref().err(),
        Some(&vec!["Unknown variable: unused".to_owned()])
    );
    let params = params.replace(r#","unused":"#, r#","tags":"#);
    let body = form("anime.updateMyListStatus", &params);
    assert!(body.starts_with("tags=tag+0%2Ctag+1%2C"), "{}", &body[..40]);
    assert!(body.contains("tag+19999&comments=%C3%A9%C3%A9"));
    assert_eq!(body.matches("%C3%A9").count(), 300_000);
}
