/**
 * Turns one AniList GraphQL request body into the status and JSON body AniList would send.
 *
 * Documents are parsed, validated and executed by graphql-js against AniList's own schema
 * (`data/anilist-schema.json`, an introspection result), so a client bug such as a misspelt
 * field or a wrongly typed variable is refused here exactly as upstream refuses it. Errors use
 * AniList's envelope: `{"errors":[{"message","status","locations"}],"data":…}`, and the HTTP
 * status is the first error's `status` (400 for invalid documents, 404 for a missing entity).
 */
import { readFile } from 'node:fs/promises';
import { buildClientSchema, executeSync, getOperationAST, parse, validate } from 'graphql';
import { createDataGenerator } from './fake-data.mjs';

const DEFAULT_SCHEMA_URL = new URL('../data/anilist-schema.json', import.meta.url);

/** Parsing the 1.3 MB introspection takes a while; every simulator in the process shares it. */
const schemaCache = new Map();

/** @param {string | URL} location path or file URL of an introspection result */
export function loadAniListSchema(location = DEFAULT_SCHEMA_URL) {
  const key = String(location);
  if (!schemaCache.has(key)) {
    const loading = readFile(location, 'utf8').then((text) => {
      const introspection = JSON.parse(text);
      return buildClientSchema(introspection.data ?? introspection);
    });
    loading.catch(() => schemaCache.delete(key)); // a failed load may be retried
    schemaCache.set(key, loading);
  }
  return schemaCache.get(key);
}

/**
 * @param {import('graphql').GraphQLSchema} schema
 * @param {{ pageTotal: number, isMissing?: (id: number) => boolean }} options
 * @returns {(request: { body: string, authorization?: string }) => { status: number, payload: object }}
 */
export function createGraphQLResponder(schema, options) {
  const generator = createDataGenerator(options);

  return function respond({ body, authorization }) {
    let request;
    try {
      request = JSON.parse(body);
    } catch {
      return failure(400, 'Invalid JSON in the request body.');
    }
    if (typeof request?.query !== 'string' || request.query.trim() === '') {
      return failure(400, 'Must provide a query string.');
    }

    let document;
    try {
      document = parse(request.query);
    } catch (error) {
      return failure(400, error.message, error.locations);
    }
    const invalid = validate(schema, document);
    if (invalid.length > 0)
      return envelope(
        invalid.map((error) => errorEntry(error, 400)),
        null,
      );

    const operationName = typeof request.operationName === 'string' ? request.operationName : undefined;
    const operation = getOperationAST(document, operationName);
    if (!operation) return failure(400, 'Must provide a valid operationName for a document with several operations.');
    if (needsToken(operation) && !/^Bearer \S+/.test(authorization ?? '')) return failure(401, 'Unauthorized.');

    const result = executeSync({
      schema,
      document,
      operationName,
      variableValues: isPlainObject(request.variables) ? request.variables : undefined,
      rootValue: operation.operation === 'mutation' ? generator.mutationRoot : generator.queryRoot,
      fieldResolver: generator.resolveField,
    });
    if (!result.errors) return { status: 200, payload: { data: result.data } };
    // No data at all means the variables were refused before execution: a caller error.
    const fallbackStatus = result.data === undefined ? 400 : 500;
    return envelope(
      result.errors.map((error) => errorEntry(error, error.originalError?.status ?? fallbackStatus)),
      result.data ?? null,
    );
  };
}

/** Mutations and the signed-in user's own data need `Authorization: Bearer <token>`, as upstream. */
function needsToken(operation) {
  if (operation.operation === 'mutation') return true;
  return operation.selectionSet.selections.some(
    (selection) => selection.kind === 'Field' && selection.name.value === 'Viewer',
  );
}

function errorEntry(error, status) {
  const entry = { message: error.message, status };
  if (error.locations) entry.locations = error.locations;
  return entry;
}

/** An AniList error envelope with one entry and no data, e.g. for a 429 or an injected 503. */
export function failure(status, message, locations) {
  return envelope([errorEntry({ message, locations }, status)], null);
}

function envelope(errors, data) {
  return { status: errors[0].status, payload: { errors, data } };
}

function isPlainObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
