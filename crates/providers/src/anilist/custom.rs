//! Caller-written documents (`anilist.custom`, `anilist.customPage`): a light local parse that
//! catches malformed documents before they cost a request, and tells the transport what it needs
//! (mutation or not, D1; the top-level response keys, to unwrap a single root; what the response
//! cache needs to know, turned into its hint by `cache_hint`). Its tokenizer is the crate's one
//! GraphQL lexer.

use std::collections::HashSet;

/// What the transport needs to know about a caller-written document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomDocument {
    /// The operation is a `mutation` (never retried by default, D1).
    pub is_mutation: bool,
    /// The top-level response keys (alias or field name), fragments resolved, in order.
    pub root_keys: Vec<String>,
    /// The document opens with its operation (no fragment is defined before it).
    pub opens_with_operation: bool,
    /// The operation's root fields by name (aliases resolved), in order; None when its root
    /// selects a fragment.
    pub root_fields: Option<Vec<String>>,
}

/// Checks the shape of a caller-written document (not empty, balanced braces, exactly one
/// operation, well-formed selections) and reports whether it is a mutation and its root keys.
pub fn analyze_custom_document(document: &str) -> Result<CustomDocument, Vec<String>> {
    let parsed = parse(document)?;
    let root_keys = parsed
        .response_keys(&parsed.operation.selection)
        .map_err(|problem| vec![problem])?;
    let root_fields = parsed
        .root_field_names()
        .map(|names| names.into_iter().map(str::to_owned).collect());
    Ok(CustomDocument {
        is_mutation: parsed.operation.kind == OperationType::Mutation,
        root_keys,
        opens_with_operation: parsed.operation_first,
        root_fields,
    })
}

/// `anilist.customPage`: the document must be a query whose single root is `Page`, declaring
/// `$page` and `$perPage` as `Int` and selecting `pageInfo { hasNextPage }`.
pub fn check_custom_page_document(document: &str) -> Result<(), Vec<String>> {
    let parsed = parse(document)?;
    let mut problems = Vec::new();
    if parsed.operation.kind != OperationType::Query {
        problems.push("The customPage document must be a query.".to_owned());
    }
    for variable in ["page", "perPage"] {
        let declared_int = parsed.operation.variables.iter().any(|(name, type_text)| {
            *name == variable && (type_text == "Int" || type_text == "Int!")
        });
        if !declared_int {
            problems.push(format!(
                "The customPage document must declare ${variable} as Int."
            ));
        }
    }
    let roots = parsed
        .fields(&parsed.operation.selection)
        .map_err(|problem| vec![problem])?;
    match roots.as_slice() {
        [page] if page.name == "Page" && page.alias.is_none() => {
            let page_fields = parsed
                .fields(&page.selection)
                .map_err(|problem| vec![problem])?;
            let has_next_page = page_fields
                .iter()
                .filter(|field| field.name == "pageInfo" && field.alias.is_none())
                .any(|page_info| {
                    parsed.fields(&page_info.selection).is_ok_and(|inner| {
                        inner
                            .iter()
                            .any(|field| field.name == "hasNextPage" && field.alias.is_none())
                    })
                });
            if !has_next_page {
                problems.push(
                    "The customPage document must select pageInfo { hasNextPage } inside Page."
                        .to_owned(),
                );
            }
        }
        _ => problems
            .push("The customPage document must select exactly one root field: Page.".to_owned()),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Punctuator(char),
    Spread,
    Name(&'a str),
    /// Numbers and strings: only their position matters here.
    Literal,
}

impl Token<'_> {
    fn describe(self) -> String {
        match self {
            Token::Punctuator(c) => format!("\"{c}\""),
            Token::Spread => "\"...\"".to_owned(),
            Token::Name(name) => format!("\"{name}\""),
            Token::Literal => "a literal value".to_owned(),
        }
    }
}

fn tokenize(source: &str) -> Result<Vec<Token<'_>>, String> {
    let bytes = source.as_bytes();
    let mut tokens = Vec::new();
    let mut position = 0;
    while let Some(&byte) = bytes.get(position) {
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' | b',' => position += 1,
            b'#' => {
                while bytes
                    .get(position)
                    .is_some_and(|&b| b != b'\n' && b != b'\r')
                {
                    position += 1;
                }
            }
            b'!' | b'$' | b'&' | b'(' | b')' | b':' | b'=' | b'@' | b'[' | b']' | b'{' | b'|'
            | b'}' => {
                tokens.push(Token::Punctuator(char::from(byte)));
                position += 1;
            }
            b'.' if source[position..].starts_with("...") => {
                tokens.push(Token::Spread);
                position += 3;
            }
            b'"' => {
                position = skip_string(source, position)?;
                tokens.push(Token::Literal);
            }
            b'-' | b'0'..=b'9' => {
                position += 1;
                while bytes
                    .get(position)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
                {
                    position += 1;
                }
                tokens.push(Token::Literal);
            }
            b'_' | b'a'..=b'z' | b'A'..=b'Z' => {
                let start = position;
                while bytes
                    .get(position)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                {
                    position += 1;
                }
                tokens.push(Token::Name(&source[start..position]));
            }
            0xEF if source[position..].starts_with('\u{feff}') => position += '\u{feff}'.len_utf8(),
            _ => {
                let unexpected = source[position..].chars().next().unwrap_or('?');
                return Err(format!(
                    "Unexpected character {unexpected:?} in the GraphQL document."
                ));
            }
        }
    }
    Ok(tokens)
}

/// Returns the position after the string starting at `start` (a `"` or `"""`).
fn skip_string(source: &str, start: usize) -> Result<usize, String> {
    let unterminated = || "Unterminated string in the GraphQL document.".to_owned();
    if source[start..].starts_with("\"\"\"") {
        let mut position = start + 3;
        loop {
            let rest = source.get(position..).ok_or_else(unterminated)?;
            if rest.starts_with("\\\"\"\"") {
                position += 4;
            } else if rest.starts_with("\"\"\"") {
                return Ok(position + 3);
            } else {
                position += rest.chars().next().ok_or_else(unterminated)?.len_utf8();
            }
        }
    }
    let mut chars = source[start + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            '"' => return Ok(start + 1 + offset + 1),
            '\\' => {
                chars.next();
            }
            '\n' | '\r' => break,
            _ => {}
        }
    }
    Err(unterminated())
}

/// Documents nesting deeper than this are refused: the parser recurses once per level, and a
/// hostile document must not be able to exhaust the stack.
const MAX_NESTING: usize = 128;

fn check_balanced(tokens: &[Token<'_>]) -> Result<(), String> {
    let mut open = Vec::new();
    for token in tokens {
        match token {
            Token::Punctuator(c @ ('{' | '(' | '[')) => {
                open.push(*c);
                if open.len() > MAX_NESTING {
                    return Err(format!(
                        "The GraphQL document nests deeper than {MAX_NESTING} levels."
                    ));
                }
            }
            Token::Punctuator(c @ ('}' | ')' | ']')) => {
                let expected = match c {
                    '}' => '{',
                    ')' => '(',
                    _ => '[',
                };
                if open.pop() != Some(expected) {
                    return Err(unbalanced());
                }
            }
            _ => {}
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(unbalanced())
    }
}

fn unbalanced() -> String {
    "The GraphQL document has unbalanced braces, brackets or parentheses.".to_owned()
}

// ---------------------------------------------------------------------------------------------
// Syntax tree (only what the checks need)

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OperationType {
    Query,
    Mutation,
}

#[derive(Debug)]
enum Selection<'a> {
    Field(Field<'a>),
    FragmentSpread(&'a str),
    InlineFragment(Vec<Selection<'a>>),
}

#[derive(Debug)]
struct Field<'a> {
    alias: Option<&'a str>,
    name: &'a str,
    selection: Vec<Selection<'a>>,
}

struct OperationDefinition<'a> {
    kind: OperationType,
    /// Declared variables: name and type as written (`Int`, `[MediaSort]!`).
    variables: Vec<(&'a str, String)>,
    selection: Vec<Selection<'a>>,
}

struct ParsedDocument<'a> {
    operation: OperationDefinition<'a>,
    fragments: Vec<(&'a str, Vec<Selection<'a>>)>,
    /// No fragment is defined before the operation (the document opens with it).
    operation_first: bool,
}

/// State of one fragment-resolving walk over a selection set.
struct FragmentWalk<'s, 'a> {
    found: Vec<&'s Field<'a>>,
    /// Fragments being expanded right now: meeting one again means a cycle.
    expanding: Vec<&'a str>,
    expanded: HashSet<&'a str>,
}

impl<'a> ParsedDocument<'a> {
    /// The operation's root fields by name, or None when its root selects a fragment.
    fn root_field_names(&self) -> Option<Vec<&'a str>> {
        let field_name = |item: &Selection<'a>| match item {
            Selection::Field(field) => Some(field.name),
            Selection::FragmentSpread(_) | Selection::InlineFragment(_) => None,
        };
        self.operation.selection.iter().map(field_name).collect()
    }

    /// The fields of a selection set, fragments resolved. A fragment spread twice contributes
    /// its fields once, which keeps documents whose fragments fan out from blowing up.
    fn fields<'s>(&'s self, selection: &'s [Selection<'a>]) -> Result<Vec<&'s Field<'a>>, String> {
        let mut walk = FragmentWalk {
            found: Vec::new(),
            expanding: Vec::new(),
            expanded: HashSet::new(),
        };
        self.collect_fields(selection, &mut walk)?;
        Ok(walk.found)
    }

    fn collect_fields<'s>(
        &'s self,
        selection: &'s [Selection<'a>],
        walk: &mut FragmentWalk<'s, 'a>,
    ) -> Result<(), String> {
        for item in selection {
            match item {
                Selection::Field(field) => walk.found.push(field),
                Selection::InlineFragment(inner) => self.collect_fields(inner, walk)?,
                Selection::FragmentSpread(name) => {
                    if walk.expanding.contains(name) {
                        return Err(
                            "The GraphQL document's fragments spread into each other in a cycle."
                                .to_owned(),
                        );
                    }
                    if !walk.expanded.insert(name) {
                        continue;
                    }
                    let (_, inner) = self
                        .fragments
                        .iter()
                        .find(|(fragment, _)| fragment == name)
                        .ok_or_else(|| format!("Unknown fragment: {name}"))?;
                    if walk.expanding.len() >= MAX_NESTING {
                        return Err(format!(
                            "The GraphQL document's fragments nest deeper than {MAX_NESTING} levels."
                        ));
                    }
                    walk.expanding.push(name);
                    self.collect_fields(inner, walk)?;
                    walk.expanding.pop();
                }
            }
        }
        Ok(())
    }

    fn response_keys(&self, selection: &[Selection<'a>]) -> Result<Vec<String>, String> {
        let mut seen = HashSet::new();
        Ok(self
            .fields(selection)?
            .into_iter()
            .map(|field| field.alias.unwrap_or(field.name))
            .filter(|key| seen.insert(*key))
            .map(str::to_owned)
            .collect())
    }
}

fn parse(document: &str) -> Result<ParsedDocument<'_>, Vec<String>> {
    let tokens = tokenize(document).map_err(|problem| vec![problem])?;
    if tokens.is_empty() {
        return Err(vec!["The GraphQL document is empty.".to_owned()]);
    }
    check_balanced(&tokens).map_err(|problem| vec![problem])?;
    let mut parser = Parser {
        tokens: &tokens,
        position: 0,
    };
    let mut operations = Vec::new();
    let mut fragments = Vec::new();
    let mut operation_first = false;
    while parser.peek().is_some() {
        match parser.definition().map_err(|problem| vec![problem])? {
            Definition::Operation(operation) => {
                operation_first |= fragments.is_empty() && operations.is_empty();
                operations.push(operation);
            }
            Definition::Fragment(name, selection) => fragments.push((name, selection)),
        }
    }
    let count = operations.len();
    match operations.pop() {
        Some(operation) if count == 1 => Ok(ParsedDocument {
            operation,
            fragments,
            operation_first,
        }),
        Some(_) => Err(vec![format!(
            "The GraphQL document contains {count} operations; send exactly one."
        )]),
        None => Err(vec![
            "The GraphQL document contains no operation.".to_owned()
        ]),
    }
}

enum Definition<'a> {
    Operation(OperationDefinition<'a>),
    Fragment(&'a str, Vec<Selection<'a>>),
}

struct Parser<'t, 'a> {
    tokens: &'t [Token<'a>],
    position: usize,
}

impl<'a> Parser<'_, 'a> {
    fn peek(&self) -> Option<Token<'a>> {
        self.tokens.get(self.position).copied()
    }

    fn next(&mut self) -> Result<Token<'a>, String> {
        let token = self
            .peek()
            .ok_or_else(|| "Unexpected end of the GraphQL document.".to_owned())?;
        self.position += 1;
        Ok(token)
    }

    fn unexpected(token: Token<'_>) -> String {
        format!("Unexpected {} in the GraphQL document.", token.describe())
    }

    fn expect(&mut self, punctuator: char) -> Result<(), String> {
        match self.next()? {
            Token::Punctuator(c) if c == punctuator => Ok(()),
            other => Err(Self::unexpected(other)),
        }
    }

    fn eat(&mut self, punctuator: char) -> bool {
        let found = self.peek() == Some(Token::Punctuator(punctuator));
        if found {
            self.position += 1;
        }
        found
    }

    fn name(&mut self) -> Result<&'a str, String> {
        match self.next()? {
            Token::Name(name) => Ok(name),
            other => Err(Self::unexpected(other)),
        }
    }

    fn definition(&mut self) -> Result<Definition<'a>, String> {
        let kind = match self.peek() {
            Some(Token::Punctuator('{')) => {
                let selection = self.selection_set()?;
                return Ok(Definition::Operation(OperationDefinition {
                    kind: OperationType::Query,
                    variables: Vec::new(),
                    selection,
                }));
            }
            Some(Token::Name("fragment")) => {
                self.position += 1;
                let name = self.name()?;
                if self.name()? != "on" {
                    return Err(format!(
                        "The fragment {name} needs a type condition (on Type)."
                    ));
                }
                self.name()?;
                self.directives()?;
                return Ok(Definition::Fragment(name, self.selection_set()?));
            }
            Some(Token::Name("query")) => OperationType::Query,
            Some(Token::Name("mutation")) => OperationType::Mutation,
            Some(Token::Name("subscription")) => {
                return Err("Subscriptions are not supported.".to_owned())
            }
            _ => return Err(Self::unexpected(self.next()?)),
        };
        self.position += 1;
        if matches!(self.peek(), Some(Token::Name(_))) {
            self.position += 1;
        }
        let variables = if self.eat('(') {
            self.variable_definitions()?
        } else {
            Vec::new()
        };
        self.directives()?;
        let selection = self.selection_set()?;
        Ok(Definition::Operation(OperationDefinition {
            kind,
            variables,
            selection,
        }))
    }

    /// After `(`: `$name: Type = default @directives`, up to `)`.
    fn variable_definitions(&mut self) -> Result<Vec<(&'a str, String)>, String> {
        let mut variables = Vec::new();
        while !self.eat(')') {
            self.expect('$')?;
            let name = self.name()?;
            self.expect(':')?;
            let type_text = self.type_reference()?;
            if self.eat('=') {
                self.value()?;
            }
            self.directives()?;
            variables.push((name, type_text));
        }
        if variables.is_empty() {
            return Err("Empty variable list \"()\" in the GraphQL document.".to_owned());
        }
        Ok(variables)
    }

    fn type_reference(&mut self) -> Result<String, String> {
        let mut text = if self.eat('[') {
            let inner = self.type_reference()?;
            self.expect(']')?;
            format!("[{inner}]")
        } else {
            self.name()?.to_owned()
        };
        if self.eat('!') {
            text.push('!');
        }
        Ok(text)
    }

    fn value(&mut self) -> Result<(), String> {
        match self.next()? {
            Token::Literal | Token::Name(_) => Ok(()),
            Token::Punctuator('$') => self.name().map(|_| ()),
            Token::Punctuator('[') => {
                while !self.eat(']') {
                    self.value()?;
                }
                Ok(())
            }
            Token::Punctuator('{') => {
                while !self.eat('}') {
                    self.name()?;
                    self.expect(':')?;
                    self.value()?;
                }
                Ok(())
            }
            other => Err(Self::unexpected(other)),
        }
    }

    fn arguments(&mut self) -> Result<(), String> {
        if self.eat('(') {
            if self.eat(')') {
                return Err("Empty argument list \"()\" in the GraphQL document.".to_owned());
            }
            while !self.eat(')') {
                self.name()?;
                self.expect(':')?;
                self.value()?;
            }
        }
        Ok(())
    }

    fn directives(&mut self) -> Result<(), String> {
        while self.eat('@') {
            self.name()?;
            self.arguments()?;
        }
        Ok(())
    }

    fn selection_set(&mut self) -> Result<Vec<Selection<'a>>, String> {
        self.expect('{')?;
        let mut selection = Vec::new();
        while !self.eat('}') {
            selection.push(self.selection()?);
        }
        if selection.is_empty() {
            return Err("Empty selection set \"{}\" in the GraphQL document.".to_owned());
        }
        Ok(selection)
    }

    fn selection(&mut self) -> Result<Selection<'a>, String> {
        if self.peek() == Some(Token::Spread) {
            self.position += 1;
            return match self.peek() {
                Some(Token::Name("on")) => {
                    self.position += 1;
                    self.name()?;
                    self.directives()?;
                    Ok(Selection::InlineFragment(self.selection_set()?))
                }
                Some(Token::Name(name)) => {
                    self.position += 1;
                    self.directives()?;
                    Ok(Selection::FragmentSpread(name))
                }
                _ => {
                    self.directives()?;
                    Ok(Selection::InlineFragment(self.selection_set()?))
                }
            };
        }
        let first = self.name()?;
        let (alias, name) = if self.eat(':') {
            (Some(first), self.name()?)
        } else {
            (None, first)
        };
        self.arguments()?;
        self.directives()?;
        let selection = if self.peek() == Some(Token::Punctuator('{')) {
            self.selection_set()?
        } else {
            Vec::new()
        };
        Ok(Selection::Field(Field {
            alias,
            name,
            selection,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyze(document: &str) -> Result<CustomDocument, Vec<String>> {
        analyze_custom_document(document)
    }

    fn keys(document: &str) -> Vec<String> {
        analyze(document).expect("a valid document").root_keys
    }

    #[test]
    fn single_root_query() {
        let doc =
            analyze("query ($id: Int) { Media(id: $id) { id title { romaji } } }").expect("valid");
        assert_eq!(
            doc,
            CustomDocument {
                is_mutation: false,
                root_keys: vec!["Media".to_owned()],
                opens_with_operation: true,
                root_fields: Some(vec!["Media".to_owned()]),
            }
        );
        assert_eq!(keys("{ Viewer { id } }"), ["Viewer"]);
    }

    #[test]
    fn aliases_and_multiple_roots() {
        assert_eq!(
            keys("query Two { a: Media(id: 1) { id } b: Media(id: 2) { id } }"),
            ["a", "b"]
        );
        assert_eq!(
            keys("{ Viewer { id } __typename Viewer { name } }"),
            ["Viewer", "__typename"]
        );
    }

    #[test]
    fn mutations_are_recognised() {
        let doc = analyze(
            "mutation Save($id: Int) { SaveMediaListEntry(mediaId: $id, status: CURRENT) { id } }",
        )
        .expect("valid");
        assert!(doc.is_mutation);
        assert_eq!(doc.root_keys, ["SaveMediaListEntry"]);
    }

    #[test]
    fn fragments_are_resolved_for_root_keys() {
        let document = r#"
            # A comment with { an unbalanced brace
            fragment Roots on Query { Viewer { id } GenreCollection }
            query Q { ...Roots ... on Query { SiteStatistics { users { nodes { count } } } } }
        "#;
        assert_eq!(
            keys(document),
            ["Viewer", "GenreCollection", "SiteStatistics"]
        );
        assert_eq!(
            analyze("query { ...Missing }"),
            Err(vec!["Unknown fragment: Missing".to_owned()])
        );
        assert_eq!(
            analyze("fragment A on Query { ...B } fragment B on Query { ...A } { ...A }"),
            Err(vec![
                "The GraphQL document's fragments spread into each other in a cycle.".to_owned()
            ])
        );
    }

    #[test]
    fn strings_directives_and_values_are_skipped() {
        let document = r#"query ($skip: Boolean = false, $s: [String!]! @deprecated) {
            Page(page: 1, perPage: 5) @include(if: true) {
                media(search: "a } tricky { string", sort: [POPULARITY_DESC], startDate_greater: -1.5e3) { id }
                notes: media(search: """block "quoted" } \""" string""", type: ANIME) @skip(if: $skip) { id }
            }
        }"#;
        assert_eq!(keys(document), ["Page"]);
        assert_eq!(
            keys("query { Media(id: 1) { title { romaji(stylised: true) } } }"),
            ["Media"]
        );
        assert_eq!(
            keys("query Q($in: FuzzyDateInput = { year: 2024, month: 1 }) { Media(id: 1) { id } }"),
            ["Media"]
        );
    }

    #[test]
    fn malformed_documents_are_rejected() {
        let problem = |document: &str| analyze(document).expect_err(document);
        assert_eq!(problem(""), ["The GraphQL document is empty."]);
        assert_eq!(
            problem("  # only a comment\n"),
            ["The GraphQL document is empty."]
        );
        assert_eq!(
            problem("{ Viewer { id }"),
            ["The GraphQL document has unbalanced braces, brackets or parentheses."]
        );
        assert_eq!(
            problem("{ Viewer { id } } }"),
            ["The GraphQL document has unbalanced braces, brackets or parentheses."]
        );
        assert_eq!(
            problem("{ Media(id: 1 { id } }"),
            ["The GraphQL document has unbalanced braces, brackets or parentheses."]
        );
        assert_eq!(
            problem("{ Media(search: \"open) { id } }"),
            ["Unterminated string in the GraphQL document."]
        );
        assert_eq!(
            problem("{ Viewer { id } } { Viewer { name } }"),
            ["The GraphQL document contains 2 operations; send exactly one."]
        );
        assert_eq!(
            problem("fragment F on User { id }"),
            ["The GraphQL document contains no operation."]
        );
        assert_eq!(
            problem("subscription { Viewer { id } }"),
            ["Subscriptions are not supported."]
        );
        assert_eq!(
            problem("{ }"),
            ["Empty selection set \"{}\" in the GraphQL document."]
        );
        assert_eq!(
            problem("{ Viewer % }"),
            ["Unexpected character '%' in the GraphQL document."]
        );
        assert_eq!(
            problem("Viewer { id }"),
            ["Unexpected \"Viewer\" in the GraphQL document."]
        );
        assert_eq!(
            problem("query ($id Int) { Media(id: $id) { id } }"),
            ["Unexpected \"Int\" in the GraphQL document."]
        );
        assert_eq!(
            problem("{ Media(id:) { id } }"),
            ["Unexpected \")\" in the GraphQL document."]
        );
    }

    #[test]
    fn fragments_fanning_out_are_expanded_once() {
        let mut document = String::from("fragment F0 on Query { Viewer { id } }\n");
        for level in 1..40 {
            let previous = level - 1;
            document.push_str(&format!(
                "fragment F{level} on Query {{ ...F{previous} ...F{previous} }}\n"
            ));
        }
        document.push_str("{ ...F39 }");
        assert_eq!(keys(&document), ["Viewer"]);

        let mut chain = String::from("{ ...F0 }\n");
        for level in 0..200 {
            let next = level + 1;
            chain.push_str(&format!("fragment F{level} on Query {{ ...F{next} }}\n"));
        }
        chain.push_str("fragment F200 on Query { Viewer { id } }");
        assert_eq!(
            analyze(&chain),
            Err(vec![
                "The GraphQL document's fragments nest deeper than 128 levels.".to_owned()
            ])
        );
    }

    #[test]
    fn absurd_nesting_is_refused_before_parsing() {
        let deep = format!(
            "{{ Media(search: {}1{}) {{ id }} }}",
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(
            analyze(&deep),
            Err(vec![
                "The GraphQL document nests deeper than 128 levels.".to_owned()
            ])
        );
        let fine = format!(
            "{{ Media(search: {}1{}) {{ id }} }}",
            "[".repeat(100),
            "]".repeat(100)
        );
        assert_eq!(keys(&fine), ["Media"]);
    }

    #[test]
    fn custom_page_documents() {
        let good = "query ($page: Int, $perPage: Int!, $search: String) {
            Page(page: $page, perPage: $perPage) { pageInfo { hasNextPage total } media(search: $search) { id } }
        }";
        assert_eq!(check_custom_page_document(good), Ok(()));
        let via_fragment = "fragment Info on Page { pageInfo { hasNextPage } }
            query ($page: Int, $perPage: Int) { Page(page: $page, perPage: $perPage) { ...Info users { id } } }";
        assert_eq!(check_custom_page_document(via_fragment), Ok(()));
    }

    #[test]
    fn custom_page_documents_report_every_missing_piece() {
        assert_eq!(
            check_custom_page_document("mutation ($page: String) { Page { pageInfo { total } } }"),
            Err(vec![
                "The customPage document must be a query.".to_owned(),
                "The customPage document must declare $page as Int.".to_owned(),
                "The customPage document must declare $perPage as Int.".to_owned(),
                "The customPage document must select pageInfo { hasNextPage } inside Page."
                    .to_owned(),
            ])
        );
        let two_roots =
            "query ($page: Int, $perPage: Int) { Page { pageInfo { hasNextPage } } Viewer { id } }";
        assert_eq!(
            check_custom_page_document(two_roots),
            Err(vec![
                "The customPage document must select exactly one root field: Page.".to_owned()
            ])
        );
        let aliased = "query ($page: Int, $perPage: Int) { p: Page { pageInfo { hasNextPage } } }";
        assert_eq!(
            check_custom_page_document(aliased),
            Err(vec![
                "The customPage document must select exactly one root field: Page.".to_owned()
            ])
        );
        let list_page =
            "query ($page: [Int], $perPage: Int) { Page { pageInfo { hasNext: hasNextPage } } }";
        assert_eq!(
            check_custom_page_document(list_page),
            Err(vec![
                "The customPage document must declare $page as Int.".to_owned(),
                "The customPage document must select pageInfo { hasNextPage } inside Page."
                    .to_owned(),
            ])
        );
        assert_eq!(
            check_custom_page_document("{"),
            Err(vec![
                "The GraphQL document has unbalanced braces, brackets or parentheses.".to_owned()
            ])
        );
    }
}
