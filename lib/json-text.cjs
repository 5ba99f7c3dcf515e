'use strict';
// A caller's variables, operation arguments or `fields` as JSON text, read once, in one pass,
// before the native call (the binding parses the text; a property read through napi costs
// several times what the whole pass costs here). The one owner of how those values are read:
// as `JSON.stringify` reads them (own enumerable string keys, `toJSON` methods, `undefined`
// properties left out and `undefined` array items sent as null); what JSON cannot carry (NaN, infinities,
// functions, symbols, bigints, lone surrogates, nesting deeper than MAX_DEPTH) becomes a problem
// naming its path, so the call fails with AniLinkValidationError instead of sending an altered
// value; a getter or Proxy trap that throws fails the call with its thrown value as the cause
// (decisions D33).

const { AniLinkErrorCodes } = require('./errors.cjs');

/** Deeper than any variables object; a cycle would otherwise recurse forever. */
const MAX_DEPTH = 32;

/** How a number JSON cannot carry is named in a problem. */
function describeNumber(number) {
  if (Number.isNaN(number)) return 'NaN';
  return number > 0 ? 'inf' : '-inf';
}

/**
 * A well-formed string as a JSON string literal. Text without a quote, a backslash or a
 * control character (all JSON.stringify escapes in it) is quoted as it is: on Node 20,
 * JSON.stringify and a regular expression each cost more than this loop over a short string.
 */
function quote(text) {
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || unit === 0x22 || unit === 0x5c) return JSON.stringify(text);
  }
  return `"${text}"`;
}

/** `parent.key`, or the key alone at the root of operation arguments (whose path is ''). */
const memberPath = (parent, key) => (parent === '' ? key : `${parent}.${key}`);

/** Thrown when a read throws: the binding's failure description, turned into the error by the facade. */
function readFailure(path, thrown, what = 'a getter or Proxy threw') {
  const problem = `${path === '' ? 'variables' : path} could not be read: ${what} (the thrown value is the cause)`;
  return { code: AniLinkErrorCodes.VALIDATION, details: [problem], cause: thrown };
}

/**
 * A caller's GraphQL document as text: a string, or an object converted as `String()` does
 * (a document builder's toString).
 * @throws the failure description naming `document` when the conversion throws
 */
function documentText(document) {
  try {
    return String(document);
  } catch (thrown) {
    throw readFailure('document', thrown, 'converting it to a string threw');
  }
}

/** Writes one call's values; the problems of all of them collect in `problems`, in order. */
class JsonWriter {
  constructor() {
    /** @type {string[] | undefined} */
    this.problems = undefined;
  }

  /**
   * `value` as JSON text, undefined when it is undefined.
   * @param {unknown} value
   * @param {string} path how a problem names it: 'variables', 'fields', or '' for arguments
   * @throws the failure description of a read that threw (a getter, a Proxy trap)
   */
  text(value, path) {
    return this.write(value, path, 0);
  }

  invalid(path, what) {
    const problem = `Invalid ${path}: ${what}. Expected a JSON value`;
    if (this.problems === undefined) this.problems = [problem];
    else this.problems.push(problem);
    return undefined;
  }

  /**
   * The JSON text of `value`, or undefined when it is left out (undefined, or a problem). An
   * object with a `toJSON` method is written as what it returns, called with `key` as
   * JSON.stringify calls it (a Date becomes its ISO string).
   */
  write(value, path, depth, key = '') {
    if (typeof value === 'object' && value !== null) {
      let toJSON;
      try {
        toJSON = value.toJSON;
        if (typeof toJSON === 'function') return this.written(toJSON.call(value, key), path, depth);
      } catch (thrown) {
        throw readFailure(path, thrown);
      }
    }
    return this.written(value, path, depth);
  }

  /** `write` after `toJSON`. */
  written(value, path, depth) {
    switch (typeof value) {
      case 'undefined':
        return undefined;
      case 'boolean':
        return value ? 'true' : 'false';
      case 'number':
        return Number.isFinite(value) ? String(value) : this.invalid(path, describeNumber(value));
      case 'string':
        return value.isWellFormed()
          ? quote(value)
          : this.invalid(path, 'a string with a lone surrogate (an unpaired UTF-16 code unit from U+D800 to U+DFFF)');
      case 'object':
        if (value === null) return 'null';
        if (depth >= MAX_DEPTH) return this.invalid(path, 'an object nested too deeply (a cycle?)');
        return Array.isArray(value) ? this.array(value, path, depth) : this.object(value, path, depth);
      case 'function':
        return this.invalid(path, 'a function');
      case 'symbol':
        return this.invalid(path, 'a symbol');
      case 'bigint':
        return this.invalid(path, 'a bigint');
      default:
        return this.invalid(path, 'an unsupported value');
    }
  }

  array(items, path, depth) {
    let length;
    try {
      length = items.length;
    } catch (thrown) {
      throw readFailure(path, thrown);
    }
    let text = '[';
    for (let i = 0; i < length; i += 1) {
      let item;
      try {
        item = items[i];
      } catch (thrown) {
        throw readFailure(`${path}[${i}]`, thrown);
      }
      const itemText = this.write(item, `${path}[${i}]`, depth + 1, String(i));
      text += (i === 0 ? '' : ',') + (itemText ?? 'null');
    }
    return `${text}]`;
  }

  object(object, path, depth) {
    let keys;
    try {
      keys = Object.keys(object);
    } catch (thrown) {
      throw readFailure(path, thrown);
    }
    let text = '{';
    let first = true;
    for (let i = 0; i < keys.length; i += 1) {
      const key = keys[i];
      let member;
      try {
        member = object[key];
      } catch (thrown) {
        throw readFailure(memberPath(path, key), thrown);
      }
      const memberText = this.write(member, memberPath(path, key), depth + 1, key);
      if (memberText === undefined) continue;
      // A key with a lone surrogate is sent with U+FFFD in its place, as Node would send it.
      text += `${first ? '' : ','}${quote(key.toWellFormed())}:${memberText}`;
      first = false;
    }
    return `${text}}`;
  }
}

module.exports = { JsonWriter, documentText };
