// Checks the generated AniList catalog against the schema with graphql-js, without the native
// addon: every default document (and the `fields` samples the Rust tests pin down) must validate,
// stay within the limits of crates/providers/src/anilist/LIMITS.md, and declare the root field's
// arguments with their exact types. Also runs the generator's --check mode.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Kind, print, type GraphQLField, type SelectionSetNode } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { anilistSchema, ANILIST_SCHEMA_PATH, onlyOperation, schemaErrors } from './support/anilist-schema';

const root = join(__dirname, '..');
const catalogPath = join(root, 'crates/providers/src/anilist/catalog.json');
const samplesPath = join(root, 'crates/providers/src/anilist/narrowing-samples.json');
const generator = join(root, 'scripts/generate-anilist.mjs');

interface CatalogOperation {
  key: string;
  kind: 'query' | 'page' | 'mutation';
  rootField: string;
  itemsField: string | null;
  acceptsFields: boolean;
  variables: { name: string; type: string; hoisted?: boolean }[];
  estimatedCost: number;
  defaultDocument: string;
}

interface Catalog {
  limits: { maxDepth: number; maxItemDepth: number; maxCost: number };
  operations: CatalogOperation[];
}

/** The complexity above which AniList rejects a document (see LIMITS.md). */
const ANILIST_MAX_COMPLEXITY = 500;

const catalog = JSON.parse(readFileSync(catalogPath, 'utf8')) as Catalog;
const samples = JSON.parse(readFileSync(samplesPath, 'utf8')) as {
  operation: string;
  fields: string[];
  document: string;
}[];

/** The cost model of LIMITS.md: every field costs 1, fragments cost nothing themselves. */
function cost(selectionSet: SelectionSetNode | undefined): number {
  if (!selectionSet) return 0;
  return selectionSet.selections.reduce((sum, selection) => {
    if (selection.kind === Kind.FIELD) return sum + 1 + cost(selection.selectionSet);
    if (selection.kind === Kind.INLINE_FRAGMENT) return sum + cost(selection.selectionSet);
    throw new Error('catalog documents never use named fragments');
  }, 0);
}

/** Field nesting, the root field being level 1. */
function depth(selectionSet: SelectionSetNode | undefined): number {
  if (!selectionSet) return 0;
  return Math.max(
    0,
    ...selectionSet.selections.map((selection) => {
      if (selection.kind === Kind.FIELD) return 1 + depth(selection.selectionSet);
      if (selection.kind === Kind.INLINE_FRAGMENT) return depth(selection.selectionSet);
      throw new Error('catalog documents never use named fragments');
    }),
  );
}

function rootArguments(operation: CatalogOperation): readonly GraphQLField<unknown, unknown>['args'][number][] {
  if (operation.kind === 'mutation') return anilistSchema.getMutationType()!.getFields()[operation.rootField].args;
  const queryFields = anilistSchema.getQueryType()!.getFields();
  if (operation.kind === 'query') return queryFields[operation.rootField].args;
  const pageType = anilistSchema.getType('Page');
  if (!pageType || !('getFields' in pageType)) throw new Error('no Page type');
  return [...queryFields.Page.args, ...pageType.getFields()[operation.itemsField!].args];
}

describe('AniList catalog', () => {
  it('has the 25 + 18 + 29 operations of the original', () => {
    const count = (kind: string) => catalog.operations.filter((operation) => operation.kind === kind).length;
    expect([count('query'), count('page'), count('mutation')]).toEqual([25, 18, 29]);
    expect(new Set(catalog.operations.map((operation) => operation.key)).size).toBe(72);
  });

  it('documents the limits LIMITS.md states', () => {
    const limitsText = readFileSync(join(root, 'crates/providers/src/anilist/LIMITS.md'), 'utf8');
    expect(limitsText).toContain(`at most ${catalog.limits.maxDepth} levels`);
    expect(limitsText).toContain(`at most ${catalog.limits.maxCost}`);
    expect(catalog.limits.maxCost).toBeLessThan(ANILIST_MAX_COMPLEXITY);
  });

  describe.each(catalog.operations.map((operation) => [operation.key, operation] as const))('%s', (_key, operation) => {
    it('default document validates against the schema', () => {
      expect(schemaErrors(operation.defaultDocument)).toEqual([]);
    });

    it('default document stays within the depth and cost limits', () => {
      const definition = onlyOperation(operation.defaultDocument);
      expect(depth(definition.selectionSet)).toBeLessThanOrEqual(catalog.limits.maxDepth);
      expect(cost(definition.selectionSet)).toBeLessThanOrEqual(catalog.limits.maxCost);
      expect(cost(definition.selectionSet)).toBe(operation.estimatedCost);
    });

    it('declares every argument of the root field with its exact type', () => {
      const definition = onlyOperation(operation.defaultDocument);
      expect(definition.operation).toBe(operation.kind === 'mutation' ? 'mutation' : 'query');
      const declared = new Map(
        (definition.variableDefinitions ?? []).map((variable) => [variable.variable.name.value, variable]),
      );
      for (const argument of rootArguments(operation)) {
        const variable = declared.get(argument.name);
        expect(variable && print(variable.type), argument.name).toBe(String(argument.type));
        expect(operation.variables.find((entry) => entry.name === argument.name)?.type).toBe(String(argument.type));
      }
      const extra = operation.variables.filter(
        (variable) => !rootArguments(operation).some((arg) => arg.name === variable.name),
      );
      expect(extra.every((variable) => variable.hoisted)).toBe(true);
    });

    if (operation.kind === 'page') {
      it('selects pageInfo and exactly one items field inside Page', () => {
        const [page] = onlyOperation(operation.defaultDocument).selectionSet.selections;
        if (page.kind !== Kind.FIELD) throw new Error('Page is not a field');
        const names = page.selectionSet!.selections.map((selection) =>
          selection.kind === Kind.FIELD ? selection.name.value : '',
        );
        expect(names).toEqual(['pageInfo', operation.itemsField]);
      });
    }
  });

  it("the fields samples pinned by the Rust tests validate and stay under AniList's complexity limit", () => {
    expect(samples.length).toBeGreaterThanOrEqual(5);
    for (const sample of samples) {
      expect(schemaErrors(sample.document), `${sample.operation} ${sample.fields.join(',')}`).toEqual([]);
      expect(cost(onlyOperation(sample.document).selectionSet)).toBeLessThanOrEqual(ANILIST_MAX_COMPLEXITY);
    }
  });

  it('the schema validator used here does catch a bad document', () => {
    expect(schemaErrors('query { Media { nope } }')).not.toEqual([]);
    expect(schemaErrors('query ($id: String) { Media(id: $id) { id } }')).not.toEqual([]);
  });
});

describe('generate-anilist.mjs --check', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'anilist-generator-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('passes on the committed files', () => {
    expect(() => execFileSync(process.execPath, [generator, '--check'], { stdio: 'pipe' })).not.toThrow();
  });

  it('fails and names the stale file when a generated file is out of date', () => {
    // A copy of the project layout the generator expects, with one generated file edited.
    mkdirSync(join(scratch, 'scripts'));
    mkdirSync(join(scratch, 'data'));
    mkdirSync(join(scratch, 'types'));
    mkdirSync(join(scratch, 'crates/providers/src/anilist'), { recursive: true });
    cpSync(generator, join(scratch, 'scripts/generate-anilist.mjs'));
    cpSync(ANILIST_SCHEMA_PATH, join(scratch, 'data/anilist-schema.json'));
    cpSync(join(root, 'types/anilist.generated.d.ts'), join(scratch, 'types/anilist.generated.d.ts'));
    cpSync(join(root, 'types/anilist.strict.generated.d.ts'), join(scratch, 'types/anilist.strict.generated.d.ts'));
    writeFileSync(join(scratch, 'crates/providers/src/anilist/catalog.json'), '{}\n');

    const result = spawnSync(process.execPath, [join(scratch, 'scripts/generate-anilist.mjs'), '--check'], {
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('crates/providers/src/anilist/catalog.json');
    expect(result.stderr).not.toContain('anilist.generated.d.ts');
  });
});
