/**
 * The AniList schema the catalog was generated from, and the graphql-js checks the specs run
 * against it. Kept apart from `helpers.ts` so that the catalog check never loads the native addon.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildClientSchema,
  Kind,
  parse,
  validate,
  type GraphQLSchema,
  type IntrospectionQuery,
  type OperationDefinitionNode,
} from 'graphql';
import { expect } from 'vitest';

export const ANILIST_SCHEMA_PATH = join(__dirname, '..', '..', 'data', 'anilist-schema.json');

export const anilistSchema: GraphQLSchema = buildClientSchema(
  JSON.parse(readFileSync(ANILIST_SCHEMA_PATH, 'utf8')) as IntrospectionQuery,
);

/** What the schema finds wrong with `document` (empty for a valid document). */
export function schemaErrors(document: string): string[] {
  return validate(anilistSchema, parse(document)).map((error) => error.message);
}

/** The one definition of `document`; fails the test if there are others or it is not an operation. */
export function onlyOperation(document: string): OperationDefinitionNode {
  const definitions = parse(document).definitions;
  expect(definitions).toHaveLength(1);
  const [operation] = definitions;
  if (operation.kind !== Kind.OPERATION_DEFINITION) throw new Error('not an operation');
  return operation;
}
