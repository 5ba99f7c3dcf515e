//! The TypeScript of the wire shapes, described from their Rust declarations: a shape is
//! declared through [`wire_shape!`], which keeps the struct as written (serde attributes and
//! all) and also describes it as an `interface`, reading the same attributes serde reads
//! (`rename_all = "camelCase"`, `skip_serializing_if` for an optional field, `flatten` for an
//! `extends`) and the doc comments. A field's type comes from [`TsType`], or from the literal
//! after `as` where TypeScript names it more narrowly (`HttpMethod` for a method string).
//!
//! `generated` assembles the file from these descriptions; its test fails when the committed
//! file differs (see there for how to write it).

// The descriptions are read by the generator's test only: a build of the addon has none.
#[cfg(test)]
pub use describe::*;

#[cfg(test)]
mod describe {
    use super::{camel, has_serde};

    /// A Rust type as TypeScript sees it once serde has written it as JSON.
    pub trait TsType {
        fn ts() -> String;

        /// The type of a field serde leaves out when it is absent (`skip_serializing_if`): the
        /// field is optional, so an `Option` is its inner type.
        fn ts_when_present() -> String {
            Self::ts()
        }
    }

    macro_rules! ts_as {
        ($ts:literal: $($ty:ty),*) => {
            $(impl TsType for $ty {
                fn ts() -> String {
                    $ts.to_string()
                }
            })*
        };
    }

    ts_as!("number": u8, u16, u32, u64, f64);
    ts_as!("string": str, String);
    ts_as!("boolean": bool);

    impl<T: TsType + ?Sized> TsType for &T {
        fn ts() -> String {
            T::ts()
        }

        fn ts_when_present() -> String {
            T::ts_when_present()
        }
    }

    impl<T: TsType> TsType for Option<T> {
        fn ts() -> String {
            format!("{} | null", T::ts())
        }

        fn ts_when_present() -> String {
            T::ts()
        }
    }

    impl<T: TsType> TsType for [T] {
        fn ts() -> String {
            let item = T::ts();
            if item.contains(' ') {
                format!("readonly ({item})[]")
            } else {
                format!("readonly {item}[]")
            }
        }
    }

    impl<T: TsType> TsType for Vec<T> {
        fn ts() -> String {
            <[T]>::ts()
        }
    }

    /// `'a' | 'b'`: a union of string literals.
    pub fn union<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
        values
            .into_iter()
            .map(|value| format!("'{value}'"))
            .collect::<Vec<_>>()
            .join(" | ")
    }

    /// The property names the `interface`s of `declarations` (as [`interface`] writes them)
    /// declare themselves, not those they extend, sorted: what a value of those shapes may carry.
    pub fn declared_keys(declarations: &[String]) -> Vec<String> {
        let mut keys: Vec<String> = declared_properties(declarations)
            .into_iter()
            .map(|key| key.trim_end_matches('?').to_string())
            .collect();
        keys.sort();
        keys
    }

    /// As [`declared_keys`], each with `?` when optional.
    pub fn declared_properties(declarations: &[String]) -> Vec<String> {
        let mut keys: Vec<String> = declarations
            .iter()
            .flat_map(|declaration| declaration.lines())
            .filter_map(|line| line.strip_prefix("  "))
            .filter(|line| !line.starts_with(['/', '*', ' ']))
            .filter_map(|line| line.split(':').next())
            .map(str::to_string)
            .collect();
        keys.sort();
        keys
    }

    /// The keys of `value`, a JSON object, sorted (serde_json's map keeps them so).
    pub fn object_keys(value: &serde_json::Value) -> Vec<String> {
        value
            .as_object()
            .expect("an object")
            .keys()
            .cloned()
            .collect()
    }

    /// A shape declared through [`wire_shape!`]: its TypeScript declaration.
    pub trait WireShape {
        fn declaration() -> String;
    }

    /// One field of a shape as [`wire_shape!`] saw it.
    pub struct Field {
        pub name: &'static str,
        /// Each attribute as written, `#[` and `]` left out (doc comments read `doc = r"…"`).
        pub attributes: &'static [&'static str],
        pub ts: String,
        pub ts_when_present: String,
    }

    /// The `interface` of a shape named `name`, whose struct has `attributes` and `fields`.
    pub fn interface(name: &str, attributes: &[&str], fields: &[Field]) -> String {
        let camel_case = attributes
            .iter()
            .any(|attribute| attribute.contains("rename_all = \"camelCase\""));
        let serde = |field: &Field, word: &str| has_serde(field.attributes, word);
        let extends: Vec<&str> = fields
            .iter()
            .filter(|field| serde(field, "flatten"))
            .map(|field| field.ts.as_str())
            .collect();
        let mut text = doc_comment(attributes, "");
        text.push_str(&format!("export interface {name} "));
        if !extends.is_empty() {
            text.push_str(&format!("extends {} ", extends.join(", ")));
        }
        text.push_str("{\n");
        for field in fields.iter().filter(|field| !serde(field, "flatten")) {
            let key = if camel_case {
                camel(field.name)
            } else {
                field.name.to_string()
            };
            text.push_str(&doc_comment(field.attributes, "  "));
            if serde(field, "skip_serializing_if") {
                text.push_str(&format!("  {key}?: {};\n", field.ts_when_present));
            } else {
                text.push_str(&format!("  {key}: {};\n", field.ts));
            }
        }
        text.push_str("}\n");
        text
    }

    /// The doc comments among `attributes` as a JSDoc comment indented by `indent`, or nothing.
    fn doc_comment(attributes: &[&str], indent: &str) -> String {
        let lines: Vec<String> = attributes
            .iter()
            .filter_map(|attribute| attribute.strip_prefix("doc"))
            .filter_map(|rest| rest.trim_start().strip_prefix('='))
            .map(|literal| doc_text(literal.trim()))
            .collect();
        jsdoc(&lines.join("\n"), indent)
    }

    /// `text` as a JSDoc comment indented by `indent`: one line when it fits in one, else a block.
    pub fn jsdoc(text: &str, indent: &str) -> String {
        let text = text.trim();
        if text.is_empty() {
            return String::new();
        }
        if !text.contains('\n') {
            return format!("{indent}/** {text} */\n");
        }
        let mut block = format!("{indent}/**\n");
        for line in text.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                block.push_str(&format!("{indent} *\n"));
            } else {
                block.push_str(&format!("{indent} * {line}\n"));
            }
        }
        block.push_str(&format!("{indent} */\n"));
        block
    }

    /// The text of a doc attribute's literal as `stringify!` writes it: a raw string (`r"…"`,
    /// `r#"…"#`) from a `///` comment, or a plain one; the one leading space of `/// ` dropped.
    pub(crate) fn doc_text(literal: &str) -> String {
        let raw = literal.starts_with('r');
        let body = literal.trim_start_matches('r').trim_matches('#');
        let body = body
            .strip_prefix('"')
            .and_then(|body| body.strip_suffix('"'))
            .unwrap_or(body);
        let text = if raw {
            body.to_string()
        } else {
            body.replace("\\\"", "\"").replace("\\\\", "\\")
        };
        text.strip_prefix(' ').unwrap_or(&text).to_string()
    }
}

// Read by the descriptions, and at run time by the channel payloads listing their keys
// (src/wire/channels.rs).

/// `snake_case` → `camelCase`, as serde's `rename_all = "camelCase"` does.
pub(crate) fn camel(name: &str) -> String {
    let mut words = name.split('_');
    let mut text = words.next().unwrap_or_default().to_string();
    for word in words {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            text.extend(first.to_uppercase());
            text.push_str(chars.as_str());
        }
    }
    text
}

/// Whether a field's `attributes` (as `stringify!` writes them) hold a serde attribute with
/// `word` (`flatten`, `skip_serializing_if`).
pub(crate) fn has_serde(attributes: &[&str], word: &str) -> bool {
    attributes
        .iter()
        .any(|attribute| attribute.starts_with("serde") && attribute.contains(word))
}

/// Declare a wire shape: the struct as written, plus its [`TsType`] (its TypeScript name, the
/// literal after the struct's name when given) and its [`WireShape`] description. A field's
/// TypeScript type is its Rust type's [`TsType`], or the literal after `as`.
macro_rules! wire_shape {
    (
        $(#[$attribute:meta])*
        $vis:vis struct $name:ident $(<$lifetime:lifetime>)? $(as $ts_name:literal)? {
            $(
                $(#[$field_attribute:meta])*
                $field_vis:vis $field:ident : $field_ty:ty $(as $field_ts:literal)?
            ),* $(,)?
        }
    ) => {
        $(#[$attribute])*
        $vis struct $name $(<$lifetime>)? {
            $( $(#[$field_attribute])* $field_vis $field: $field_ty, )*
        }

        #[cfg(test)]
        impl $(<$lifetime>)? $crate::wire::typescript::TsType for $name $(<$lifetime>)? {
            fn ts() -> String {
                $crate::wire::typescript::wire_shape!(@name $name $($ts_name)?).to_string()
            }
        }

        #[cfg(test)]
        impl $(<$lifetime>)? $crate::wire::typescript::WireShape for $name $(<$lifetime>)? {
            fn declaration() -> String {
                use $crate::wire::typescript::TsType;
                $crate::wire::typescript::interface(
                    &Self::ts(),
                    &[$(stringify!($attribute)),*],
                    &[$($crate::wire::typescript::Field {
                        name: stringify!($field),
                        attributes: &[$(stringify!($field_attribute)),*],
                        ts: $crate::wire::typescript::wire_shape!(
                            @ts <$field_ty as TsType>::ts() $(, $field_ts)?
                        ),
                        ts_when_present: $crate::wire::typescript::wire_shape!(
                            @ts <$field_ty as TsType>::ts_when_present() $(, $field_ts)?
                        ),
                    }),*],
                )
            }
        }
    };
    (@name $name:ident) => { stringify!($name) };
    (@name $name:ident $ts_name:literal) => { $ts_name };
    (@ts $derived:expr) => { $derived };
    (@ts $derived:expr, $given:literal) => { $given.to_string() };
}

/// Declare a string enum of the wire: each variant serializes as its literal, and its
/// TypeScript is the union of the literals.
macro_rules! wire_enum {
    (
        $(#[$attribute:meta])*
        $vis:vis enum $name:ident { $( $(#[$variant_attribute:meta])* $variant:ident = $text:literal ),* $(,)? }
    ) => {
        $(#[$attribute])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name { $( $(#[$variant_attribute])* $variant, )* }

        impl $name {
            #[cfg(test)]
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $text, )* }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        #[cfg(test)]
        impl $crate::wire::typescript::TsType for $name {
            fn ts() -> String {
                $crate::wire::typescript::union(Self::ALL.iter().map(|value| value.as_str()))
            }
        }
    };
}

pub(crate) use {wire_enum, wire_shape};

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::*;

    wire_shape! {
        /// A shape of the tests.
        /// Two lines.
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Inner<'a> as "InnerShape" {
            /// Always there.
            request_id: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            retry_after_ms: Option<u64>,
            opened_at: Option<u64>,
            method: &'static str as "HttpMethod",
        }
    }

    wire_shape! {
        #[derive(Serialize)]
        struct Outer<'a> {
            #[serde(flatten)]
            inner: Inner<'a>,
            hosts: Vec<String>,
            both: &'a [Option<u32>],
        }
    }

    #[test]
    fn a_shape_reads_as_serde_writes_it() {
        assert_eq!(
            Inner::declaration(),
            "/**\n * A shape of the tests.\n * Two lines.\n */\nexport interface InnerShape {\n  /** Always there. */\n  requestId: string;\n  retryAfterMs?: number;\n  openedAt: number | null;\n  method: HttpMethod;\n}\n"
        );
        assert_eq!(
            Outer::declaration(),
            "export interface Outer extends InnerShape {\n  hosts: readonly string[];\n  both: readonly (number | null)[];\n}\n"
        );
    }

    #[test]
    fn doc_literals_read_as_written() {
        assert_eq!(
            doc_text(r##"r#" a "quoted" ≥ \ b"#"##),
            "a \"quoted\" ≥ \\ b"
        );
        assert_eq!(doc_text(r#"r" plain""#), "plain");
        assert_eq!(doc_text(r#"" esc \"q\" \\""#), "esc \"q\" \\");
    }

    #[test]
    fn snake_case_becomes_camel_case() {
        assert_eq!(camel("aborted_during_pacing"), "abortedDuringPacing");
        assert_eq!(camel("host"), "host");
    }
}
