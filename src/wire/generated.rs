//! The files generated from the declarations of the wire and of the option table, as the
//! AniList types are generated from the schema: `types/wire.generated.d.ts` (every wire shape,
//! the error codes, the hook names and the transport options' typings), the option table of
//! `docs/transport-options.md`, between its markers, and the facade's contract,
//! `lib/contract.generated.json` ([`contract`]). The test fails when a committed file differs
//! from what the declarations give; write them with
//! `ANILINK_WRITE_GENERATED=1 cargo test -p anilink-napi --lib wire::generated`.

use std::path::PathBuf;

use anilink_providers::slot::schema as slot_schema;
use anilink_transport::error::ErrorCode;
use anilink_transport::options::table::SLOT_ONLY_KEYS;
use anilink_transport::options::{Hook, OptionDoc, TRANSPORT_OPTION_DOCS};

use crate::wire::contract::contract;
use crate::wire::failure::TYPE_ERROR;
use crate::wire::hook_message::DIAGNOSTIC_HOOK;
use crate::wire::typescript::{jsdoc, union};
use crate::wire::{channels, failure, hook_message, snapshot};

const TYPINGS: &str = "types/wire.generated.d.ts";
const CONTRACT: &str = "lib/contract.generated.json";
const OPTIONS_PAGE: &str = "docs/transport-options.md";
const BEGIN: &str = "<!-- options:begin -->";
const END: &str = "<!-- options:end -->";

/// What the typings take from the hand-written ones: names TypeScript gives more narrowly than
/// the wire, and the option values that are JavaScript objects.
const IMPORTS: &str = "import type {
  CircuitBreakerOptions,
  DiagnosticsMode,
  HttpMethod,
  OnCircuitCloseHandler,
  OnCircuitOpenHandler,
  OnErrorHandler,
  OnHookErrorHandler,
  OnPaceHandler,
  OnRequestStartHandler,
  OnResponseHandler,
  RateLimitCeiling,
  RetryBudget,
  RetryPolicy,
  SharedStateOptions,
} from './transport';
import type { ResponseCache } from './response-cache';
";

fn typings() -> String {
    let mut text = String::from(
        "// Generated from the Rust declarations of src/wire/ and of the transport's option table\n// (crates/transport/src/options/table.rs) by src/wire/generated.rs; do not edit.\n\n",
    );
    text.push_str(IMPORTS);
    let aliases = [
        (
            "Every code an AniLinkError can carry.",
            "AniLinkErrorCode",
            union(ErrorCode::ALL.iter().map(|code| code.as_str())),
        ),
        (
            "The code of a failure description: an AniLinkError's, or an invalid option's (thrown as a TypeError).",
            "WireErrorCode",
            format!("AniLinkErrorCode | '{TYPE_ERROR}'"),
        ),
        (
            "The hooks the transport calls, by option key.",
            "HookName",
            union(Hook::ALL.iter().map(|hook| hook.key())),
        ),
        (
            "The `hook` of an event message that carries a diagnostic record instead of a context.",
            "DiagnosticHook",
            union([DIAGNOSTIC_HOOK]),
        ),
    ];
    for (doc, name, ts) in aliases {
        text.push('\n');
        text.push_str(&jsdoc(doc, ""));
        if ts.len() > 100 {
            let lines: Vec<String> = ts.split(" | ").map(|item| format!("  | {item}")).collect();
            text.push_str(&format!("export type {name} =\n{};\n", lines.join("\n")));
        } else {
            text.push_str(&format!("export type {name} = {ts};\n"));
        }
    }
    let shapes = failure::declarations()
        .into_iter()
        .chain(hook_message::declarations())
        .chain(snapshot::declarations())
        .chain(channels::declarations());
    for declaration in shapes {
        text.push('\n');
        text.push_str(&declaration);
    }
    let (slot_only, request): (Vec<&OptionDoc>, Vec<&OptionDoc>) = TRANSPORT_OPTION_DOCS
        .iter()
        .partition(|option| SLOT_ONLY_KEYS.contains(&option.key));
    text.push_str("\n/** Transport options: per slot, in the positional constructor form, or per request (merged per key). */\nexport interface RequestOptions {\n");
    request
        .iter()
        .for_each(|option| text.push_str(&property(option)));
    text.push_str("}\n\n/** The options of a provider slot (or of the positional form): every request option plus the slot-only ones. */\nexport interface SlotOptions extends RequestOptions {\n");
    slot_only
        .iter()
        .for_each(|option| text.push_str(&property(option)));
    text.push_str("}\n");
    text
}

/// An option as a property of the options interface, with its documentation and default.
fn property(option: &OptionDoc) -> String {
    let mut doc = option.text.to_string();
    let default = default_of(option);
    if default != "–" {
        doc.push_str(&format!(" Default: {default}."));
    }
    format!(
        "{}  {}?: {};\n",
        jsdoc(&wrap(&doc, 96), "  "),
        option.key,
        option.ts
    )
}

/// `text` in lines of at most `width` characters, broken between words and never inside a
/// code span (a longer span gets a line of its own).
fn wrap(text: &str, width: usize) -> String {
    let mut lines: Vec<String> = vec![String::new()];
    let mut in_code = false;
    for word in text.split(' ') {
        let line = lines.last_mut().expect("one line at least");
        let fits = line.chars().count() + 1 + word.chars().count() <= width;
        if line.is_empty() {
            line.push_str(word);
        } else if in_code || fits {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(word.to_string());
        }
        in_code ^= word.matches('`').count() % 2 == 1;
    }
    lines.join("\n")
}

/// An option's default as the documentation writes it; the provider catalog's for the option
/// whose default is the provider's (decisions D42).
fn default_of(option: &OptionDoc) -> String {
    if option.key != slot_schema::DEGRADED_LIMIT_FIELD {
        return option.default.to_string();
    }
    let of = |slot: &slot_schema::ProviderSlot| {
        slot.degraded_limit
            .map_or("off".to_string(), |limit| format!("`{limit}`"))
    };
    format!(
        "AniList {}, MAL {}",
        of(&slot_schema::ANILIST),
        of(&slot_schema::MAL)
    )
}

/// The option table of the documentation: one row per option, in the table's order, then the
/// slot's endpoint; laid out as the formatter (biome) lays out a Markdown table.
fn option_table() -> String {
    let mut rows: Vec<[String; 3]> = vec![[
        "option".into(),
        "default".into(),
        "what it does and accepts (anything else is a `TypeError`)".into(),
    ]];
    for option in TRANSPORT_OPTION_DOCS {
        let scope = if SLOT_ONLY_KEYS.contains(&option.key) {
            " (slot only)"
        } else {
            ""
        };
        rows.push([
            format!("`{}`{scope}", option.key),
            cell(&default_of(option)),
            cell(option.text),
        ]);
    }
    let (anilist, mal) = (slot_schema::ANILIST.api, slot_schema::MAL.api);
    rows.push([
        format!("`{}` (slot only)", slot_schema::BASE_URL_FIELD),
        "the provider's API".into(),
        cell(&format!(
            "{} AniList's is `{}`, MAL's `{}`; `{}` / `{}` replace them when set.",
            slot_schema::BASE_URL_RULE,
            anilist.default,
            mal.default,
            anilist.variable,
            mal.variable
        )),
    ]);
    let widths: Vec<usize> = (0..3)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(text, width)| format!("{text}{}", " ".repeat(width - text.chars().count())))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut text = line(&rows[0]);
    let rule: Vec<String> = widths.iter().map(|width| "-".repeat(*width)).collect();
    text.push_str(&line(&rule));
    rows[1..].iter().for_each(|row| text.push_str(&line(row)));
    text
}

/// Text inside a Markdown table cell: a `|` would end the cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// `page` with what is between its option markers replaced by the generated table.
fn with_option_table(page: &str) -> Option<String> {
    let begin = page.find(BEGIN)? + BEGIN.len();
    let end = page[begin..].find(END)? + begin;
    Some(format!(
        "{}\n\n{}\n{}",
        &page[..begin],
        option_table(),
        &page[end..]
    ))
}

/// The contract as the facade reads it: JSON, which bundlers inline and every runtime parses.
fn contract_json() -> String {
    let mut text = serde_json::to_string_pretty(&contract()).expect("the contract is plain data");
    text.push('\n');
    text
}

fn project_file(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

#[test]
fn the_generated_files_match_the_declarations() {
    let write = std::env::var_os("ANILINK_WRITE_GENERATED").is_some();
    let page_path = project_file(OPTIONS_PAGE);
    let page = std::fs::read_to_string(&page_path).expect("docs/transport-options.md is there");
    let expected_page = with_option_table(&page).unwrap_or_else(|| {
        panic!("{OPTIONS_PAGE} has no {BEGIN} … {END} markers for the option table")
    });
    let typings_path = project_file(TYPINGS);
    let expected_typings = typings();
    let contract_path = project_file(CONTRACT);
    let expected_contract = contract_json();
    if write {
        std::fs::write(&typings_path, &expected_typings).expect("writable");
        std::fs::write(&page_path, &expected_page).expect("writable");
        std::fs::write(&contract_path, &expected_contract).expect("writable");
        return;
    }
    let committed = |path: &PathBuf| std::fs::read_to_string(path).unwrap_or_default();
    let stale: Vec<&str> = [
        (TYPINGS, committed(&typings_path) == expected_typings),
        (OPTIONS_PAGE, page == expected_page),
        (CONTRACT, committed(&contract_path) == expected_contract),
    ]
    .into_iter()
    .filter(|(_, fresh)| !fresh)
    .map(|(file, _)| file)
    .collect();
    assert!(
        stale.is_empty(),
        "{} out of date with the Rust declarations: write them with ANILINK_WRITE_GENERATED=1 cargo test -p anilink-napi --lib wire::generated",
        stale.join(" and ")
    );
}

#[test]
fn the_option_table_replaces_only_what_is_between_its_markers() {
    let page = format!("# Title\n\nBefore.\n\n{BEGIN}\nstale row\n{END}\n\nAfter.\n");
    let written = with_option_table(&page).expect("markers found");
    assert!(written.starts_with(&format!("# Title\n\nBefore.\n\n{BEGIN}\n\n| option ")));
    assert!(written.ends_with(&format!("|\n\n{END}\n\nAfter.\n")));
    assert!(!written.contains("stale row"));
    assert_eq!(
        with_option_table(&written).as_deref(),
        Some(written.as_str())
    );
    assert_eq!(with_option_table("no markers"), None);
}

#[test]
fn every_option_is_documented_once_with_a_type_and_a_default() {
    for option in TRANSPORT_OPTION_DOCS {
        assert!(!option.ts.is_empty(), "{}", option.key);
        assert!(!option.default.is_empty(), "{}", option.key);
        assert!(
            option.text.ends_with('.'),
            "{}: one sentence at least",
            option.key
        );
    }
    let table = option_table();
    assert_eq!(table.lines().count(), TRANSPORT_OPTION_DOCS.len() + 3);
}

#[test]
fn long_documentation_wraps_between_words() {
    assert_eq!(wrap("aa bb cc dd", 5), "aa bb\ncc dd");
    assert_eq!(wrap("averylongword x", 5), "averylongword\nx");
    assert_eq!(wrap("a `b c d` e", 3), "a\n`b c d`\ne");
}
