//! The recursive-descent parser over the lexer's tokens: exactly one operation plus any fragments,
//! with values, arguments and directives skipped rather than interpreted, since the checks only
//! need selections and declared variables.

use super::document::{Field, OperationDefinition, OperationType, ParsedDocument, Selection};
use super::lexer::{check_balanced, tokenize, Token};

pub(super) fn parse(document: &str) -> Result<ParsedDocument<'_>, Vec<String>> {
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
    use super::super::analyze_custom_document as analyze;
    use super::super::tests::keys;

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
}
