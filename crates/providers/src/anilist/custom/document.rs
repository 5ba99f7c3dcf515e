//! The syntax tree of a caller-written document, only as deep as the checks need, and the one walk
//! that resolves fragments over it: root keys, root field names and the `customPage` checks all
//! read fields through it, so cycles, unknown fragments and fan-out are handled in one place.

use std::collections::HashSet;

use super::lexer::MAX_NESTING;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OperationType {
    Query,
    Mutation,
}

#[derive(Debug)]
pub(super) enum Selection<'a> {
    Field(Field<'a>),
    FragmentSpread(&'a str),
    InlineFragment(Vec<Selection<'a>>),
}

#[derive(Debug)]
pub(super) struct Field<'a> {
    pub(super) alias: Option<&'a str>,
    pub(super) name: &'a str,
    pub(super) selection: Vec<Selection<'a>>,
}

pub(super) struct OperationDefinition<'a> {
    pub(super) kind: OperationType,
    /// Declared variables: name and type as written (`Int`, `[MediaSort]!`).
    pub(super) variables: Vec<(&'a str, String)>,
    pub(super) selection: Vec<Selection<'a>>,
}

pub(super) struct ParsedDocument<'a> {
    pub(super) operation: OperationDefinition<'a>,
    pub(super) fragments: Vec<(&'a str, Vec<Selection<'a>>)>,
    /// No fragment is defined before the operation (the document opens with it).
    pub(super) operation_first: bool,
}

/// State of one fragment-resolving walk over a selection set.
struct FragmentWalk<'s, 'a> {
    pub(super) found: Vec<&'s Field<'a>>,
    /// Fragments being expanded right now: meeting one again means a cycle.
    pub(super) expanding: Vec<&'a str>,
    pub(super) expanded: HashSet<&'a str>,
}

impl<'a> ParsedDocument<'a> {
    /// The operation's root fields by name, or None when its root selects a fragment.
    pub(super) fn root_field_names(&self) -> Option<Vec<&'a str>> {
        let field_name = |item: &Selection<'a>| match item {
            Selection::Field(field) => Some(field.name),
            Selection::FragmentSpread(_) | Selection::InlineFragment(_) => None,
        };
        self.operation.selection.iter().map(field_name).collect()
    }

    /// The fields of a selection set, fragments resolved. A fragment spread twice contributes
    /// its fields once, which keeps documents whose fragments fan out from blowing up.
    pub(super) fn fields<'s>(
        &'s self,
        selection: &'s [Selection<'a>],
    ) -> Result<Vec<&'s Field<'a>>, String> {
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

    pub(super) fn response_keys(&self, selection: &[Selection<'a>]) -> Result<Vec<String>, String> {
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

#[cfg(test)]
mod tests {
    use super::super::analyze_custom_document as analyze;
    use super::super::tests::keys;

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
}
