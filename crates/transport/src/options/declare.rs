//! What one row of the option table generates, so an option is declared once: its key joins
//! [`TRANSPORT_OPTION_KEYS`](super::TRANSPORT_OPTION_KEYS) (in table order, which messages
//! follow), its field joins `PartialOptions` as a [`KeyState`](super::KeyState), and parsing,
//! unsetting and merging cover it. A row that names a resolved type also gets a field of that
//! name in `ResolvedOptions`, resolved from its slot; values that combine several keys (or
//! depend on the call) are the table's derived fields. Its documentation columns join
//! [`TRANSPORT_OPTION_DOCS`](super::TRANSPORT_OPTION_DOCS), from which the binding generates
//! the `RequestOptions` typings and the documentation's option table.

/// `transport_options! { options { rows } derived { fields } }`, where a row is
/// `"key" => field: Type = parser[, resolved Resolved = resolver]; ts "T", default "d", "doc";`
/// with `parser(key, value)` returning `Result<Type, OptionError>` and
/// `resolver(Option<&Type>)` returning `Resolved`, the option's TypeScript type, its default
/// as the documentation writes it (`–`: none) and what it does and accepts (Markdown);
/// a derived field is `field: Type = deriver;` with `deriver(&PartialOptions, is_write)`.
macro_rules! transport_options {
    (
        options {
            $(
                $(#[$doc:meta])* $key:literal => $field:ident : $ty:ty = $parse:expr $(, resolved $resolved:ty = $resolve:expr)? ;
                ts $ts:literal, default $default:literal, $text:literal ;
            )*
        }
        derived {
            $( $(#[$derived_doc:meta])* $derived:ident : $derived_ty:ty = $derive:expr ; )*
        }
    ) => {
        /// Every transport option key, in the table's order (the original's 23, then ours):
        /// the binding's "unknown option" message lists them so.
        pub const TRANSPORT_OPTION_KEYS: &[&str] = &[$($key),*];

        /// Every transport option's documentation, in the table's order.
        pub const TRANSPORT_OPTION_DOCS: &[$crate::options::declare::OptionDoc] = &[
            $( $crate::options::declare::OptionDoc { key: $key, ts: $ts, default: $default, text: $text }, )*
        ];

        /// Options as given at one level (slot or request), validated but not yet defaulted.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct PartialOptions {
            $( $(#[$doc])* pub $field: KeyState<$ty>, )*
        }

        /// Options of one call after merging and defaulting: what the attempt loop reads.
        #[derive(Clone, Debug, PartialEq)]
        pub struct ResolvedOptions {
            $( $( pub $field: $resolved, )? )*
            $( $(#[$derived_doc])* pub $derived: $derived_ty, )*
        }

        impl PartialOptions {
            /// `{...self, ...over}`, per key.
            pub fn merged_with(&self, over: &PartialOptions) -> PartialOptions {
                PartialOptions { $( $field: KeyState::merged(&self.$field, &over.$field), )* }
            }

            /// Apply the defaults. `is_write` is a mutation or REST write: with `retry` left
            /// unset it is not retried (decisions D1); an explicit `true` or policy object opts in.
            pub fn resolve(&self, is_write: bool) -> ResolvedOptions {
                ResolvedOptions {
                    $( $( $field: ($resolve)(self.$field.value()), )? )*
                    $( $derived: ($derive)(self, is_write), )*
                }
            }

            /// Parse one transport option. Returns false when `key` is not a transport option,
            /// so the caller can try its own keys (auth fields, `baseUrl`) or reject it.
            pub fn parse_key(&mut self, key: &str, value: &OptValue) -> Result<bool, OptionError> {
                if matches!(value, OptValue::Undefined) {
                    return Ok(self.unset(key));
                }
                match key {
                    $( $key => self.$field = KeyState::Set(($parse)(key, value)?), )*
                    _ => return Ok(false),
                }
                Ok(true)
            }

            /// A key given as `undefined`: it overrides a slot's value with the default.
            fn unset(&mut self, key: &str) -> bool {
                match key {
                    $( $key => self.$field = KeyState::Unset, )*
                    _ => return false,
                }
                true
            }

            /// Whether `key` was given a value (not absent, not `undefined`).
            fn is_set(&self, key: &str) -> bool {
                match key {
                    $( $key => matches!(self.$field, KeyState::Set(_)), )*
                    _ => false,
                }
            }
        }
    };
}

pub(super) use transport_options;

/// One option's documentation columns.
#[derive(Clone, Copy, Debug)]
pub struct OptionDoc {
    pub key: &'static str,
    /// Its TypeScript type, as the typings declare it.
    pub ts: &'static str,
    /// Its default, as the documentation writes it; `–` when it has none.
    pub default: &'static str,
    /// What it does and which values it accepts (Markdown, one paragraph).
    pub text: &'static str,
}
