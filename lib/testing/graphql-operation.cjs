'use strict';
// Which AniList operation a GraphQL request runs: its operation name and its root fields, read
// with a small tokenizer so the testing entry needs no GraphQL library. Enough to route a
// request to the answers a test queued; documents are not validated here.

const PUNCTUATORS = new Set(['{', '}', '(', ')', '[', ']', ':', '@', '=', '!', '$', '|', '&']);
const NAME_START = /[_A-Za-z]/;
const NAME_PART = /[_0-9A-Za-z]/;
const OPERATION_KEYWORDS = new Set(['query', 'mutation', 'subscription']);

/** Names and punctuators of `document`, without strings, numbers, comments and commas. */
function tokenize(document) {
  const tokens = [];
  let at = 0;
  while (at < document.length) {
    const char = document[at];
    if (char === '#') {
      while (at < document.length && document[at] !== '\n') at += 1;
    } else if (document.startsWith('"""', at)) {
      const end = document.indexOf('"""', at + 3);
      at = end === -1 ? document.length : end + 3;
    } else if (char === '"') {
      at += 1;
      while (at < document.length && document[at] !== '"' && document[at] !== '\n') at += document[at] === '\\' ? 2 : 1;
      at += 1;
    } else if (document.startsWith('...', at)) {
      tokens.push('...');
      at += 3;
    } else if (PUNCTUATORS.has(char)) {
      tokens.push(char);
      at += 1;
    } else if (NAME_START.test(char)) {
      const start = at;
      while (at < document.length && NAME_PART.test(document[at])) at += 1;
      tokens.push(document.slice(start, at));
    } else {
      at += 1; // whitespace, commas, digits and signs of numbers
    }
  }
  return tokens;
}

/** The index just past the bracketed group that opens at `tokens[start]`. */
function skipGroup(tokens, start) {
  const open = tokens[start];
  const close = open === '{' ? '}' : open === '(' ? ')' : ']';
  let depth = 0;
  for (let at = start; at < tokens.length; at += 1) {
    if (tokens[at] === open) depth += 1;
    else if (tokens[at] === close && --depth === 0) return at + 1;
  }
  return tokens.length;
}

/** The root fields (each field name, then its alias if it has one) of the selection set at `start`. */
function rootFieldsOf(tokens, start) {
  const fields = [];
  const end = skipGroup(tokens, start) - 1;
  let at = start + 1;
  while (at < end) {
    const token = tokens[at];
    if (token === '{' || token === '(' || token === '[') {
      at = skipGroup(tokens, at); // a sub-selection, arguments or a list value
    } else if (token === '...') {
      at += tokens[at + 1] === 'on' ? 3 : 2; // fragment spreads at the root are not followed
    } else if (token === '@') {
      at += 2; // a directive; its arguments are skipped as a group
    } else if (tokens[at + 1] === ':' && tokens[at + 2] !== undefined) {
      fields.push(tokens[at + 2], token);
      at += 3;
    } else {
      if (!PUNCTUATORS.has(token)) fields.push(token);
      at += 1;
    }
  }
  return fields;
}

/**
 * @param {string} document a GraphQL document
 * @param {string} [operationName] the request's `operationName`, for documents with several operations
 * @returns {{ operationName?: string, rootFields: string[] }}
 */
function describeOperation(document, operationName) {
  const tokens = tokenize(document);
  let at = 0;
  while (at < tokens.length) {
    const keyword = tokens[at];
    let name;
    if (OPERATION_KEYWORDS.has(keyword) || keyword === 'fragment') {
      at += 1;
      if (tokens[at] !== '(' && tokens[at] !== '{' && tokens[at] !== '@') name = tokens[at];
    }
    // Skip variable definitions and directives up to the selection set.
    while (at < tokens.length && tokens[at] !== '{') at = tokens[at] === '(' ? skipGroup(tokens, at) : at + 1;
    if (at >= tokens.length) break;
    const isOperation = keyword !== 'fragment';
    if (isOperation && (operationName === undefined || operationName === name)) {
      return { operationName: name, rootFields: rootFieldsOf(tokens, at) };
    }
    at = skipGroup(tokens, at);
  }
  return { operationName, rootFields: [] };
}

module.exports = { describeOperation };
