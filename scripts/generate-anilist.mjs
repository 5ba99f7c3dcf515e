#!/usr/bin/env node
// Generates the AniList operation catalog (crates/providers/src/anilist/catalog.json) and its
// TypeScript typings (types/anilist.generated.d.ts, and the opt-in schema-exact result types in
// types/anilist.strict.generated.d.ts) from the introspection result in data/anilist-schema.json.
//
//   node scripts/generate-anilist.mjs           write the files
//   node scripts/generate-anilist.mjs --check   exit 1 when a committed file is stale
//
// The selection rules and the query budget are explained in crates/providers/src/anilist/LIMITS.md;
// keep that file in step with SELECTION_LIMITS below.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCHEMA_PATH = join(PROJECT_ROOT, 'data/anilist-schema.json');
const CATALOG_PATH = join(PROJECT_ROOT, 'crates/providers/src/anilist/catalog.json');
const TYPES_PATH = join(PROJECT_ROOT, 'types/anilist.generated.d.ts');
const STRICT_TYPES_PATH = join(PROJECT_ROOT, 'types/anilist.strict.generated.d.ts');

/** The budget every default document must respect (see LIMITS.md for the reasoning). */
const SELECTION_LIMITS = Object.freeze({
  /** Field nesting below the operation, counting the root field as level 1. */
  maxDepth: 6,
  /** Levels of fields selected below an operation's item (the root value, or one page item). */
  maxItemDepth: 4,
  /** Estimated complexity: every selected field costs 1 (AniList rejects documents above 500). */
  maxCost: 300,
});

/**
 * How nested records (types with an `id: Int!`) are selected, from richest to leanest. The
 * generator takes the first level whose document fits SELECTION_LIMITS.maxCost.
 */
const NESTED_RECORD_LEVELS = Object.freeze([
  { name: 'summary+connections', records: 'summary', connections: true },
  { name: 'summary', records: 'summary', connections: false },
  { name: 'scalars', records: 'scalars', connections: false },
  { name: 'id', records: 'id', connections: false },
]);

/**
 * Optional arguments of nested fields that operations accept as variables of their own, as the
 * original package does. Each rule binds `argument` to `$variable` on the fields taking it: every
 * such field, or only `field` ("Type.field"), or only the fields of `owner` reached through `via`
 * (the parent's "Type.field": the anime and manga sides of `UserStatistics` get their own limit
 * and sort). A variable's type is the argument's schema type.
 */
const HOISTED_ARGUMENTS = Object.freeze([
  { variable: 'asHtml', argument: 'asHtml' },
  { variable: 'asArray', argument: 'asArray' },
  { variable: 'scoreFormat', argument: 'format', field: 'MediaList.score' },
  ...['anime', 'manga'].flatMap((side) => [
    { variable: `${side}StatLimit`, argument: 'limit', owner: 'UserStatistics', via: `UserStatisticTypes.${side}` },
    { variable: `${side}StatSort`, argument: 'sort', owner: 'UserStatistics', via: `UserStatisticTypes.${side}` },
  ]),
]);

/**
 * The arguments of connection fields (`Staff.characterMedia(sort, onList, page, perPage)`,
 * `SiteStatistics.users(sort, page, perPage)`) are variables named after the field: `$characterMediaSort`, `$characterMediaPage`…,
 * as the original names them (`mediaSort`, `mediaPage` on `character`; `staffMediaType` on
 * `staff`). Connections whose arguments the caller can so size are selected by default.
 */
function connectionArgumentRules(schema) {
  const rules = [];
  for (const type of schema.types.values()) {
    if (type.kind !== 'OBJECT' || type.name === schema.queryType || type.name === schema.mutationType) continue;
    for (const field of type.fields) {
      if (!schema.isConnection(namedType(field.type))) continue;
      for (const arg of field.args) {
        rules.push({
          variable: `${field.name}${upperFirst(arg.name)}`,
          argument: arg.name,
          field: `${type.name}.${field.name}`,
        });
      }
    }
  }
  return rules;
}

/**
 * Arguments that mark a list field as paged: it is only selected on request (`fields`), unless
 * the caller sizes it through hoisted variables (SelectionBuilder.nested).
 */
const PAGING_ARGUMENTS = new Set(['page', 'perPage', 'limit']);

/** Descriptions of fields only moderators may read; default documents leave them out. */
const MODERATOR_ONLY = /mod-only|mod only|for site moderators/i;

/** How the Rust validator checks each scalar (`any` accepts every JSON value). */
const SCALAR_CHECKS = Object.freeze({
  Int: 'int',
  Float: 'float',
  String: 'string',
  Boolean: 'boolean',
  ID: 'id',
  FuzzyDateInt: 'int',
  CountryCode: 'string',
  Json: 'any',
});

/** TypeScript spelling of each scalar. */
const SCALAR_TS = Object.freeze({
  Int: 'number',
  Float: 'number',
  String: 'string',
  Boolean: 'boolean',
  ID: 'string | number',
  FuzzyDateInt: 'number',
  CountryCode: 'string',
  Json: 'unknown',
});

// The catalog of api.md §9.1, in registry order: [key, GraphQL root field, accepts `fields`].
const QUERY_OPERATIONS = [
  ['user', 'User', true],
  ['media', 'Media', true],
  ['mediaTrend', 'MediaTrend', true],
  ['airingSchedule', 'AiringSchedule', true],
  ['character', 'Character', true],
  ['staff', 'Staff', true],
  ['mediaList', 'MediaList', true],
  ['mediaListCollection', 'MediaListCollection', true],
  ['genreCollection', 'GenreCollection', false],
  ['mediaTagCollection', 'MediaTagCollection', false],
  ['viewer', 'Viewer', false],
  ['notification', 'Notification', false],
  ['studio', 'Studio', true],
  ['review', 'Review', true],
  ['activity', 'Activity', false],
  ['activityReply', 'ActivityReply', false],
  ['following', 'Following', false],
  ['follower', 'Follower', false],
  ['thread', 'Thread', true],
  ['threadComment', 'ThreadComment', true],
  ['recommendation', 'Recommendation', true],
  ['markdown', 'Markdown', false],
  ['aniChartUser', 'AniChartUser', false],
  ['siteStatistics', 'SiteStatistics', true],
  ['externalLinkSourceCollection', 'ExternalLinkSourceCollection', false],
];

// [key, items field of Page, accepts `fields`].
const PAGE_OPERATIONS = [
  ['users', 'users', true],
  ['medias', 'media', true],
  ['characters', 'characters', true],
  ['staffs', 'staff', true],
  ['studios', 'studios', true],
  ['mediaLists', 'mediaList', true],
  ['airingSchedules', 'airingSchedules', true],
  ['mediaTrends', 'mediaTrends', true],
  ['notifications', 'notifications', false],
  ['followers', 'followers', true],
  ['following', 'following', true],
  ['activities', 'activities', false],
  ['activityReplies', 'activityReplies', true],
  ['threads', 'threads', true],
  ['threadComments', 'threadComments', true],
  ['reviews', 'reviews', true],
  ['recommendations', 'recommendations', true],
  ['likes', 'likes', true],
];

// [key, accepts `fields`]; the root field is the PascalCase key.
const MUTATION_OPERATIONS = [
  ['updateUser', true],
  ['saveMediaListEntry', true],
  ['updateMediaListEntries', true],
  ['deleteMediaListEntry', true],
  ['deleteCustomList', true],
  ['saveTextActivity', true],
  ['saveMessageActivity', true],
  ['saveListActivity', true],
  ['deleteActivity', true],
  ['toggleActivityPin', false],
  ['toggleActivitySubscription', false],
  ['saveActivityReply', true],
  ['deleteActivityReply', true],
  ['toggleLike', true],
  ['toggleLikeV2', false],
  ['toggleFollow', true],
  ['toggleFavourite', true],
  ['updateFavouriteOrder', true],
  ['saveReview', true],
  ['rateReview', true],
  ['deleteReview', true],
  ['saveRecommendation', true],
  ['saveThread', true],
  ['deleteThread', true],
  ['toggleThreadSubscription', true],
  ['saveThreadComment', true],
  ['deleteThreadComment', true],
  ['updateAniChartSettings', false],
  ['updateAniChartHighlights', false],
];

/**
 * Queries that need a token besides every mutation: api.md names viewer, notification and
 * page.notifications; the schema describes Markdown as "(Requires auth)".
 */
const AUTH_QUERIES = new Set(['query.viewer', 'query.notification', 'query.page.notifications', 'query.markdown']);

/** Item keys selected whatever `fields` asks for (api.md §9.1); `id` is added for record types. */
const ALWAYS_SELECTED_OVERRIDES = {
  'query.media': ['id', 'idMal'],
  'query.page.medias': ['id', 'idMal'],
  'query.mediaTrend': [],
  'query.page.mediaTrends': [],
  'query.siteStatistics': [],
  'query.mediaListCollection': [],
};

/** Local checks beyond the schema types, each with the message shown to the caller. */
function requirementRules(key, variableNames, hoistedNames) {
  if (key === 'query.media') {
    return [
      {
        anyOf: variableNames.filter((name) => !hoistedNames.includes(name)),
        message: 'The Media query requires at least one filter variable.',
      },
    ];
  }
  if (key === 'query.mediaListCollection') {
    // The schema describes MediaListCollection as needing a user and a media type.
    return [
      {
        anyOf: ['userId', 'userName'],
        message: 'The MediaListCollection query requires a userId or userName variable.',
      },
      { anyOf: ['type'], message: 'The MediaListCollection query requires a type variable.' },
    ];
  }
  return [];
}

// ---------------------------------------------------------------------------------------------
// Schema access

function loadSchema() {
  const introspection = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8'));
  const schema = introspection.__schema ?? introspection.data?.__schema;
  if (!schema) throw new Error(`${SCHEMA_PATH} is not an introspection result`);
  return new SchemaIndex(schema);
}

/** Introspection data with the look-ups the generator needs. */
class SchemaIndex {
  constructor(schema) {
    this.types = new Map(schema.types.filter((type) => !type.name.startsWith('__')).map((type) => [type.name, type]));
    this.queryType = schema.queryType.name;
    this.mutationType = schema.mutationType.name;
    /** HOISTED_ARGUMENTS and the connection arguments of records. */
    this.hoistingRules = [...HOISTED_ARGUMENTS, ...connectionArgumentRules(this)];
  }

  type(name) {
    const type = this.types.get(name);
    if (!type) throw new Error(`The schema has no type ${name}`);
    return type;
  }

  field(typeName, fieldName) {
    const field = this.type(typeName).fields.find((candidate) => candidate.name === fieldName);
    if (!field) throw new Error(`The schema has no field ${typeName}.${fieldName}`);
    return field;
  }

  isLeaf(typeName) {
    const kind = this.type(typeName).kind;
    return kind === 'SCALAR' || kind === 'ENUM';
  }

  /** Records are types carrying `id: Int!`; everything else nested is a value object. */
  isRecord(typeName) {
    const type = this.type(typeName);
    return (
      type.kind === 'OBJECT' && type.fields.some((field) => field.name === 'id' && typeText(field.type) === 'Int!')
    );
  }

  isConnection(typeName) {
    const type = this.type(typeName);
    return type.kind === 'OBJECT' && typeName.endsWith('Connection') && type.fields.some((f) => f.name === 'nodes');
  }

  /**
   * Fields a default document selects: not deprecated, not moderator-only, and no argument the
   * caller would have to give.
   */
  selectableFields(typeName) {
    return this.type(typeName).fields.filter(
      (field) => !field.isDeprecated && !hasRequiredArgument(field) && !MODERATOR_ONLY.test(field.description ?? ''),
    );
  }

  /**
   * The type of each hoisted variable on the given object types (an operation's reachable
   * types): that of the arguments it binds there, which must agree. Root fields are left out:
   * their arguments are the operations' own variables.
   */
  hoistedVariableTypes(typeNames) {
    const types = new Map();
    for (const name of typeNames) {
      const type = this.type(name);
      if (type.kind !== 'OBJECT' || name === this.queryType || name === this.mutationType) continue;
      for (const field of type.fields) {
        for (const binding of hoistedBindings(this, name, field)) {
          const ref = field.args.find((arg) => arg.name === binding.argument).type;
          const known = types.get(binding.variable);
          if (known && typeText(known) !== typeText(ref)) {
            throw new Error(`$${binding.variable} binds arguments of types ${typeText(known)} and ${typeText(ref)}`);
          }
          types.set(binding.variable, ref);
        }
      }
    }
    return types;
  }

  /** Fails when a rule of HOISTED_ARGUMENTS matches no field of the schema. */
  checkHoistingRules() {
    const bound = new Set();
    for (const type of this.types.values()) {
      if (type.kind !== 'OBJECT') continue;
      for (const field of type.fields)
        for (const binding of hoistedBindings(this, type.name, field)) bound.add(binding.variable);
    }
    for (const rule of HOISTED_ARGUMENTS) {
      if (!bound.has(rule.variable)) throw new Error(`No field takes the argument hoisted as $${rule.variable}`);
    }
  }

  /** A record or value object whose selectable fields are all scalars or enums (paged lists aside). */
  isFlat(typeName) {
    return this.selectableFields(typeName).every(
      (field) => this.isLeaf(namedType(field.type)) || isPaged(field) || this.isConnection(namedType(field.type)),
    );
  }
}

function typeText(ref) {
  if (ref.kind === 'NON_NULL') return `${typeText(ref.ofType)}!`;
  if (ref.kind === 'LIST') return `[${typeText(ref.ofType)}]`;
  return ref.name;
}

function namedType(ref) {
  return ref.ofType ? namedType(ref.ofType) : ref.name;
}

function isListType(ref) {
  if (ref.kind === 'NON_NULL') return isListType(ref.ofType);
  return ref.kind === 'LIST';
}

function hasRequiredArgument(field) {
  return field.args.some((arg) => arg.type.kind === 'NON_NULL' && arg.defaultValue == null);
}

function isPaged(field) {
  return field.args.some((arg) => PAGING_ARGUMENTS.has(arg.name));
}

/** Every paging argument of the field is bound to a hoisted variable. */
function hasHoistedPaging(schema, ownerName, field) {
  const bindings = hoistedBindings(schema, ownerName, field);
  return field.args
    .filter((arg) => PAGING_ARGUMENTS.has(arg.name))
    .every((arg) => bindings.some((binding) => binding.argument === arg.name));
}

/** The field takes arguments and every one of them is bound to a hoisted variable. */
function hasHoistedArguments(schema, ownerName, field) {
  const bindings = hoistedBindings(schema, ownerName, field);
  return field.args.length > 0 && field.args.every((arg) => bindings.some((binding) => binding.argument === arg.name));
}

/** The hoisting rules matching a field of `ownerName`, as `{ argument, variable, via? }`. */
function hoistedBindings(schema, ownerName, field) {
  return schema.hoistingRules
    .filter(
      (rule) =>
        field.args.some((arg) => arg.name === rule.argument) &&
        (!rule.field || rule.field === `${ownerName}.${field.name}`) &&
        (!rule.owner || rule.owner === ownerName),
    )
    .map(({ argument, variable, via }) => ({ argument, variable, ...(via ? { via } : {}) }));
}

function upperFirst(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// ---------------------------------------------------------------------------------------------
// Selection trees
//
// A selection is an array of nodes: { field, bound?, selection? } for fields and
// { on, selection } for inline fragments; `bound` lists the hoisted variables passed to the field
// as { argument, variable }. They are rendered on one line: the document is sent with every
// request, so it stays compact.

/** Renders a selection, passing a field's hoisted variables when `declared` holds them. */
function renderSelection(selection, declared) {
  return selection
    .map((node) => {
      if (node.on) return `... on ${node.on} { ${renderSelection(node.selection, declared)} }`;
      const passed = (node.bound ?? []).filter((binding) => declared.has(binding.variable));
      const argumentList = passed.map((binding) => `${binding.argument}: $${binding.variable}`).join(', ');
      const children = node.selection ? ` { ${renderSelection(node.selection, declared)} }` : '';
      return `${node.field}${argumentList ? `(${argumentList})` : ''}${children}`;
    })
    .join(' ');
}

/**
 * Attaches the hoisted variables to the fields of a selection of `ownerName` that take them.
 * `via` is the "Type.field" the owner was reached through (null at the top), which picks the
 * anime or manga side of a `UserStatistics` breakdown.
 */
function bindHoisted(schema, selection, ownerName, via) {
  return selection.map((node) => {
    if (node.on) return { ...node, selection: bindHoisted(schema, node.selection, node.on, via) };
    if (node.field === '__typename') return node;
    const field = schema.field(ownerName, node.field);
    const bound = hoistedBindings(schema, ownerName, field)
      .filter((binding) => !binding.via || binding.via === via)
      .map(({ argument, variable }) => ({ argument, variable }));
    const selection = node.selection
      ? bindHoisted(schema, node.selection, namedType(field.type), `${ownerName}.${node.field}`)
      : undefined;
    return { field: node.field, ...(bound.length > 0 ? { bound } : {}), ...(selection ? { selection } : {}) };
  });
}

/** Estimated complexity under the documented cost model: one per field, fragments are free. */
function selectionCost(selection) {
  return selection.reduce(
    (sum, node) => sum + (node.on ? 0 : 1) + (node.selection ? selectionCost(node.selection) : 0),
    0,
  );
}

function selectionDepth(selection) {
  return selection.reduce(
    (deepest, node) => Math.max(deepest, (node.on ? 0 : 1) + (node.selection ? selectionDepth(node.selection) : 0)),
    0,
  );
}

function hoistedNames(selection, found = new Set()) {
  for (const node of selection) {
    for (const binding of node.bound ?? []) found.add(binding.variable);
    if (node.selection) hoistedNames(node.selection, found);
  }
  return found;
}

/** Builds the broad selections of the default documents (rules in LIMITS.md). */
class SelectionBuilder {
  constructor(schema, level) {
    this.schema = schema;
    this.level = level;
  }

  /** The selection of an operation's item type (object or union), or null for scalar results. */
  item(typeName, { single }) {
    const type = this.schema.type(typeName);
    if (type.kind === 'UNION') return bindHoisted(this.schema, this.union(typeName, 1), typeName, null);
    if (type.kind !== 'OBJECT') return null;
    return bindHoisted(this.schema, this.full(typeName, 1, new Set([typeName]), single), typeName, null);
  }

  leaves(typeName) {
    return this.schema
      .selectableFields(typeName)
      .filter((field) => this.schema.isLeaf(namedType(field.type)))
      .map((field) => ({ field: field.name }));
  }

  /** Every scalar of the type, its value objects expanded, nested records per level. */
  full(typeName, depth, path, single) {
    const selection = [];
    for (const field of this.schema.selectableFields(typeName)) {
      const target = namedType(field.type);
      if (this.schema.isLeaf(target)) {
        selection.push({ field: field.name });
        continue;
      }
      if (depth >= SELECTION_LIMITS.maxItemDepth || path.has(target)) continue;
      const child = this.nested(typeName, field, target, depth, path, single);
      if (child && child.length > 0) selection.push({ field: field.name, selection: child });
    }
    return selection;
  }

  nested(ownerName, field, target, depth, path, single) {
    const schema = this.schema;
    if (schema.isConnection(target)) {
      const node = namedType(schema.field(target, 'nodes').type);
      if (!this.level.connections || !single || depth !== 1) return null;
      // A connection of the item that the caller can sort and size through its own variables
      // (`mediaSort`, `mediaPage` on a character) is content, as in the original's documents.
      if (hasHoistedArguments(schema, ownerName, field)) {
        return [{ field: 'nodes', selection: this.record(node, depth + 1, new Set(path).add(node)) }];
      }
      return schema.isFlat(node) ? [{ field: 'nodes', selection: this.leaves(node) }] : null;
    }
    // A paged list is selected only when the caller sizes it through a hoisted variable (the
    // UserStatistics breakdowns take `limit: $animeStatLimit`), on a single result, and when its
    // entries are plain values (a `tags` breakdown cut before its `tag` would name nothing).
    const breakdown = single && hasHoistedPaging(schema, ownerName, field) && schema.isFlat(target);
    if (isPaged(field) && !breakdown) return null;
    if (schema.type(target).kind === 'UNION') return this.union(target, depth + 1);
    const innerPath = new Set(path).add(target);
    if (!schema.isRecord(target)) return this.full(target, depth + 1, innerPath, single);
    // Lists of rich records hanging off a record (likes, replies…) are relations, not content.
    if (isListType(field.type) && schema.isRecord(ownerName) && !schema.isFlat(target)) return null;
    return this.record(target, depth + 1, innerPath);
  }

  /** A record nested in the item, selected at the builder's level. */
  record(typeName, depth, path) {
    switch (this.level.records) {
      case 'id':
        return [{ field: 'id' }];
      case 'scalars':
        return this.leaves(typeName);
      default:
        return this.summary(typeName, depth, path);
    }
  }

  /** Scalars plus the value objects made of scalars only (title, name, image, dates). */
  summary(typeName, depth, path) {
    const selection = [];
    for (const field of this.schema.selectableFields(typeName)) {
      const target = namedType(field.type);
      if (this.schema.isLeaf(target)) {
        selection.push({ field: field.name });
      } else if (
        depth < SELECTION_LIMITS.maxItemDepth &&
        !path.has(target) &&
        this.schema.type(target).kind === 'OBJECT' &&
        !this.schema.isRecord(target) &&
        !this.schema.isConnection(target) &&
        !isPaged(field) &&
        this.schema.isFlat(target)
      ) {
        selection.push({ field: field.name, selection: this.leaves(target) });
      }
    }
    return selection;
  }

  /**
   * `__typename` and one fragment per member. GraphQL forbids one response key with two types
   * (`userId` is `Int` on activities, `Int!` on threads), so a field keeps the type of the first
   * member selecting it and is left out of members where its type differs.
   */
  union(typeName, depth) {
    const members = this.schema.type(typeName).possibleTypes.map((member) => member.name);
    const keyTypes = new Map();
    const fragments = members.map((member) => {
      const selection =
        depth === 1 ? this.full(member, 1, new Set([member]), false) : this.record(member, depth, new Set([member]));
      const compatible = selection.filter((node) => {
        const type = typeText(this.schema.field(member, node.field).type);
        if (!keyTypes.has(node.field)) keyTypes.set(node.field, type);
        return keyTypes.get(node.field) === type;
      });
      return { on: member, selection: compatible };
    });
    return [{ field: '__typename' }, ...fragments];
  }

  /**
   * The selection `fields` uses for a bare object path: what a nested field of that type gets.
   * It is shared by every path ending on the type, so it never depends on how the type was
   * reached (no `via` binding, no UserStatistics breakdown).
   */
  broad(typeName) {
    return bindHoisted(this.schema, this.unboundBroad(typeName), typeName, null);
  }

  /** `broad` before the hoisted variables are attached. */
  unboundBroad(typeName) {
    const schema = this.schema;
    const kind = schema.type(typeName).kind;
    if (kind === 'UNION') return this.union(typeName, 2);
    if (schema.isConnection(typeName)) {
      const node = namedType(schema.field(typeName, 'nodes').type);
      return [{ field: 'nodes', selection: this.record(node, 2, new Set([node])) }];
    }
    if (schema.isRecord(typeName)) return this.record(typeName, 1, new Set([typeName]));
    return this.full(typeName, 1, new Set([typeName]), false);
  }
}

// ---------------------------------------------------------------------------------------------
// Operations

function describeOperations(schema) {
  const page = schema.field(schema.queryType, 'Page');
  const pageType = namedType(page.type);
  const queries = QUERY_OPERATIONS.map(([name, rootField, acceptsFields]) => ({
    key: `query.${name}`,
    kind: 'query',
    operationName: upperFirst(name),
    rootField,
    acceptsFields,
  }));
  const pages = PAGE_OPERATIONS.map(([name, itemsField, acceptsFields]) => ({
    key: `query.page.${name}`,
    kind: 'page',
    operationName: `Page${upperFirst(name)}`,
    rootField: 'Page',
    pageField: page,
    itemsField,
    pageInfoType: namedType(schema.field(pageType, 'pageInfo').type),
    acceptsFields,
  }));
  const mutations = MUTATION_OPERATIONS.map(([name, acceptsFields]) => ({
    key: `mutation.${name}`,
    kind: 'mutation',
    operationName: upperFirst(name),
    rootField: upperFirst(name),
    acceptsFields,
  }));
  return [...queries, ...pages, ...mutations].map((operation) => ({
    ...operation,
    field: operationField(schema, operation),
  }));
}

/** The GraphQL field an operation calls: its root field, or the items field inside `Page`. */
function operationField(schema, { kind, rootField, itemsField }) {
  if (kind === 'page') return schema.field(namedType(schema.field(schema.queryType, 'Page').type), itemsField);
  return schema.field(kind === 'mutation' ? schema.mutationType : schema.queryType, rootField);
}

/** The arguments an operation declares as variables (`$page`, `$perPage` first for pages). */
function operationArguments(schema, operation) {
  const pageArguments = operation.kind === 'page' ? schema.field(schema.queryType, 'Page').args : [];
  return [...pageArguments, ...operationField(schema, operation).args];
}

function argumentList(args) {
  return args.length === 0 ? '' : `(${args.map((arg) => `${arg.name}: $${arg.name}`).join(', ')})`;
}

/** Picks the richest nested-record level whose document fits the budget. */
function chooseItemSelection(schema, operation) {
  const itemType = namedType(operation.field.type);
  const single = operation.kind !== 'page' && !isListType(operation.field.type);
  // The fields around the item: the root field, or Page + its pageInfo block + the items field.
  const frameCost = operation.kind === 'page' ? 3 + schema.selectableFields(operation.pageInfoType).length : 1;
  const frameDepth = operation.kind === 'page' ? 2 : 1;
  for (const level of NESTED_RECORD_LEVELS) {
    const selection = new SelectionBuilder(schema, level).item(itemType, { single });
    if (selection === null) return { selection: null, level: level.name, cost: frameCost };
    const cost = frameCost + selectionCost(selection);
    if (cost <= SELECTION_LIMITS.maxCost && frameDepth + selectionDepth(selection) <= SELECTION_LIMITS.maxDepth) {
      return { selection, level: level.name, cost };
    }
  }
  throw new Error(`${operation.key}: no selection level fits ${JSON.stringify(SELECTION_LIMITS)}`);
}

function buildOperation(schema, operation) {
  const itemType = namedType(operation.field.type);
  const { selection, level, cost } = chooseItemSelection(schema, operation);
  // Accepted wherever `fields` could reach a field taking the argument; declared only when used.
  // A root argument of the same name and type (updateUser's `scoreFormat`) serves as both.
  const rootArguments = operationArguments(schema, operation);
  const hoistedTypes = schema.hoistedVariableTypes(collectOutputTypes(schema, [itemType]));
  const hoisted = reachableHoistedArguments(schema, itemType).filter((name) => {
    const rootArgument = rootArguments.find((arg) => arg.name === name);
    if (rootArgument && typeText(rootArgument.type) !== typeText(hoistedTypes.get(name))) {
      throw new Error(`${operation.key}: $${name} is both an argument and a hoisted variable of another type`);
    }
    return !rootArgument;
  });
  const variables = [
    ...rootArguments.map((arg) => ({ name: arg.name, type: typeText(arg.type) })),
    ...hoisted.map((name) => ({ name, type: typeText(hoistedTypes.get(name)), hoisted: true })),
  ];
  const declared = new Set(variables.map((variable) => variable.name));
  const used = hoistedNames(selection ?? []);

  const opening =
    operation.kind === 'page'
      ? `Page${argumentList(operation.pageField.args)} { pageInfo { ${schema
          .selectableFields(operation.pageInfoType)
          .map((field) => field.name)
          .join(' ')} } ${operation.itemsField}${argumentList(operation.field.args)}`
      : `${operation.rootField}${argumentList(operation.field.args)}`;
  const closing = operation.kind === 'page' ? ' }' : '';
  const keyword = operation.kind === 'mutation' ? 'mutation' : 'query';
  const declarations = variables
    .filter((variable) => !variable.hoisted || used.has(variable.name))
    .map((variable) => `$${variable.name}: ${variable.type}`)
    .join(', ');
  const header = `${keyword} ${operation.operationName}${declarations ? `(${declarations})` : ''}`;
  const body = selection ? `${opening} { ${renderSelection(selection, declared)} }${closing}` : `${opening}${closing}`;

  const itemIsRecord = schema.type(itemType).kind === 'OBJECT' && schema.isRecord(itemType);
  const alwaysSelected = ALWAYS_SELECTED_OVERRIDES[operation.key] ?? (itemIsRecord ? ['id'] : []);
  const variableNames = variables.map((variable) => variable.name);
  const requirements = requirementRules(operation.key, variableNames, hoisted);
  return {
    key: operation.key,
    kind: operation.kind,
    rootField: operation.rootField,
    itemsField: operation.itemsField ?? null,
    itemType,
    operationName: operation.operationName,
    requiresAuth: operation.kind === 'mutation' || AUTH_QUERIES.has(operation.key),
    acceptsFields: operation.acceptsFields,
    alwaysSelected,
    variables,
    // The operation takes `variables?`: nothing is required by the schema or by a rule.
    variablesOptional: requirements.length === 0 && variables.every((variable) => !variable.type.endsWith('!')),
    requirements,
    nestedRecordLevel: level,
    opening,
    closing,
    defaultSelection: selection ? renderSelection(selection, declared) : null,
    defaultDocument: `${header} { ${body} }`,
    estimatedCost: cost,
  };
}

function reachableHoistedArguments(schema, itemType) {
  const found = new Set();
  for (const name of collectOutputTypes(schema, [itemType])) {
    const type = schema.type(name);
    if (type.kind !== 'OBJECT') continue;
    for (const field of type.fields) {
      for (const binding of hoistedBindings(schema, name, field)) found.add(binding.variable);
    }
  }
  return [...found].sort();
}

// ---------------------------------------------------------------------------------------------
// Catalog

/** Every type a variable's type refers to, inputs expanded recursively. */
function collectInputTypes(schema, typeNames, found = new Set()) {
  for (const name of typeNames) {
    if (found.has(name)) continue;
    found.add(name);
    const type = schema.type(name);
    if (type.kind === 'INPUT_OBJECT')
      collectInputTypes(
        schema,
        type.inputFields.map((field) => namedType(field.type)),
        found,
      );
  }
  return found;
}

/** Object and union types reachable from the given ones through any field. */
function collectOutputTypes(schema, typeNames) {
  const found = new Set();
  const pending = [...typeNames];
  while (pending.length > 0) {
    const name = pending.pop();
    if (found.has(name)) continue;
    const type = schema.type(name);
    if (type.kind === 'OBJECT') {
      found.add(name);
      pending.push(...type.fields.map((field) => namedType(field.type)));
    } else if (type.kind === 'UNION') {
      found.add(name);
      pending.push(...type.possibleTypes.map((member) => member.name));
    }
  }
  return found;
}

/** A field as `fields` sees it: its type and the hoisted variables it takes (`via` resolved in Rust). */
function walkableField(schema, ownerName, field) {
  const hoisted = hoistedBindings(schema, ownerName, field);
  return {
    type: typeText(field.type),
    ...(hoisted.length > 0 ? { hoisted } : {}),
  };
}

function buildCatalog(schema) {
  schema.checkHoistingRules();
  const operations = describeOperations(schema).map((operation) => buildOperation(schema, operation));
  const broadBuilder = new SelectionBuilder(schema, NESTED_RECORD_LEVELS[0]);
  const allHoisted = new Set(schema.hoistingRules.map((rule) => rule.variable));

  const inputTypeNames = collectInputTypes(
    schema,
    operations.flatMap((operation) => operation.variables.map((variable) => variable.type.replace(/[[\]!]/g, ''))),
  );
  const fieldOwners = collectOutputTypes(
    schema,
    operations.filter((operation) => operation.acceptsFields).map((operation) => operation.itemType),
  );

  const inputTypes = {};
  for (const name of [...inputTypeNames].sort()) {
    const type = schema.type(name);
    if (type.kind === 'SCALAR') {
      if (!(name in SCALAR_CHECKS)) throw new Error(`No validation rule for the scalar ${name}`);
      inputTypes[name] = { kind: 'SCALAR', check: SCALAR_CHECKS[name] };
    } else if (type.kind === 'ENUM') {
      inputTypes[name] = { kind: 'ENUM', values: type.enumValues.map((value) => value.name) };
    } else {
      inputTypes[name] = {
        kind: 'INPUT_OBJECT',
        fields: Object.fromEntries(type.inputFields.map((field) => [field.name, typeText(field.type)])),
      };
    }
  }
  const outputTypes = {};
  for (const name of [...fieldOwners].sort()) {
    const type = schema.type(name);
    const broad = broadBuilder.broad(name);
    const fields =
      type.kind === 'OBJECT'
        ? Object.fromEntries(
            type.fields
              .filter((field) => !hasRequiredArgument(field))
              .map((field) => [field.name, walkableField(schema, name, field)]),
          )
        : undefined;
    outputTypes[name] = {
      kind: type.kind,
      ...(fields ? { fields } : {}),
      broadSelection: renderSelection(broad, allHoisted),
      broadHoisted: [...hoistedNames(broad)].sort(),
    };
  }
  return { generatedFrom: 'data/anilist-schema.json', limits: SELECTION_LIMITS, operations, inputTypes, outputTypes };
}

// ---------------------------------------------------------------------------------------------
// TypeScript

const GROUP_INTERFACES = {
  query: 'AniListQueryOperations',
  page: 'AniListPageOperations',
  mutation: 'AniListMutationOperations',
};

function operationMethodName(key) {
  return key.split('.').at(-1);
}

function variablesInterfaceName(operation) {
  const name = upperFirst(operationMethodName(operation.key));
  if (operation.kind === 'page') return `${name}PageQueryVariables`;
  return `${name}${operation.kind === 'mutation' ? 'Mutation' : 'Query'}Variables`;
}

function tsDocComment(text, indent) {
  if (!text?.trim()) return '';
  const lines = text
    .trim()
    .replace(/\*\//g, '*\\/')
    .split(/\r?\n/)
    .map((line) => line.trimEnd());
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

/** Variables: lists are readonly arrays, nullable values also accept null. */
function tsInputType(schema, ref) {
  if (ref.kind === 'NON_NULL') return tsInputType(schema, ref.ofType).replace(/ \| null$/, '');
  if (ref.kind === 'LIST')
    return `readonly ${wrapForArray(tsInputType(schema, ref.ofType).replace(/ \| null$/, ''))}[] | null`;
  return `${tsNamedType(schema, ref.name)} | null`;
}

/**
 * Results, by the rule of the original's typings (every response field is a plain `T`, lists
 * are `T[]`, whatever the schema's nullability), so `const t: string = media.title.romaji`
 * compiles under --strict wherever it did against the original. With `exact`, the schema's own
 * nullability (`T | null`, `(T | null)[] | null`): the opt-in `AniListStrict` types.
 */
function tsOutputType(schema, ref, exact = false) {
  const nullable = exact && ref.kind !== 'NON_NULL';
  const inner = ref.kind === 'NON_NULL' ? ref.ofType : ref;
  const named =
    inner.kind === 'LIST'
      ? `${wrapForArray(tsOutputType(schema, inner.ofType, exact))}[]`
      : tsNamedType(schema, inner.name);
  return nullable && named !== 'unknown' ? `${named} | null` : named;
}

/** Where a hoisted variable ends up, for its doc comment. */
function hoistedVariableDescription(schema, name) {
  const rules = schema.hoistingRules.filter((candidate) => candidate.variable === name);
  const [rule] = rules;
  if (rule.field) {
    const fields = rules.map((candidate) => `\`${candidate.field}\``).join(', ');
    return `Passed as \`${rule.argument}\` to ${fields} when selected.`;
  }
  if (rule.via) return `Passed as \`${rule.argument}\` to the selected \`${rule.owner}\` lists under \`${rule.via}\`.`;
  return `Passed to the selected fields that accept \`${rule.argument}\`.`;
}

function wrapForArray(text) {
  return /[ |&]/.test(text) ? `(${text})` : text;
}

function tsNamedType(schema, name) {
  const type = schema.type(name);
  return type.kind === 'SCALAR' ? SCALAR_TS[name] : name;
}

/** Every object and union type a result can contain, and the enums they and the variables use. */
function resultTypeNames(schema, operations) {
  const inputNames = new Set();
  const outputRoots = new Set(['PageInfo']);
  for (const operation of operations) {
    for (const variable of operation.variables) {
      for (const name of collectInputTypes(schema, [variable.type.replace(/[[\]!]/g, '')])) inputNames.add(name);
    }
    if (!schema.isLeaf(operation.itemType)) outputRoots.add(operation.itemType);
  }
  const outputNames = collectOutputTypes(schema, [...outputRoots]);
  const outputEnums = new Set();
  for (const name of outputNames) {
    if (schema.type(name).kind !== 'OBJECT') continue;
    for (const field of schema.type(name).fields) {
      const target = namedType(field.type);
      if (schema.type(target).kind === 'ENUM') outputEnums.add(target);
    }
  }
  return { inputNames, outputNames, outputEnums };
}

/** The result interfaces and unions, lenient (the original's rule) or schema-exact. */
function renderResults(schema, outputNames, exact) {
  const unionMembers = new Set();
  for (const name of outputNames) {
    const type = schema.type(name);
    if (type.kind === 'UNION') for (const member of type.possibleTypes) unionMembers.add(member.name);
  }
  const lines = [];
  for (const name of [...outputNames].sort()) {
    const type = schema.type(name);
    if (type.kind === 'UNION') {
      lines.push(
        `${tsDocComment(type.description, '')}export type ${name} = ${type.possibleTypes.map((member) => member.name).join(' | ')};`,
        '',
      );
      continue;
    }
    lines.push(`${tsDocComment(type.description, '')}export interface ${name} {`);
    if (unionMembers.has(name))
      lines.push(`  /** Present when selected through a union. */`, `  __typename?: ${JSON.stringify(name)};`);
    for (const field of type.fields) {
      if (hasRequiredArgument(field)) continue;
      const deprecation = field.isDeprecated ? `@deprecated ${field.deprecationReason ?? ''}`.trim() : '';
      const doc = [field.description, deprecation].filter(Boolean).join('\n');
      lines.push(`${tsDocComment(doc, '  ')}  ${field.name}: ${tsOutputType(schema, field.type, exact)};`);
    }
    lines.push('}', '');
  }
  return lines;
}

function renderPageResults(schema, operations, exact) {
  const lines = [];
  for (const operation of operations.filter((entry) => entry.kind === 'page')) {
    const itemsField = operationField(schema, operation);
    lines.push(`/** The page returned by \`${operation.key}\`. */`);
    lines.push(`export interface ${upperFirst(operationMethodName(operation.key))}PageResult {`);
    const pageInfo = exact ? 'PageInfo | null' : 'PageInfo';
    lines.push(
      `  pageInfo: ${pageInfo};`,
      `  ${operation.itemsField}: ${tsOutputType(schema, itemsField.type, exact)};`,
      '}',
      '',
    );
  }
  return lines;
}

/**
 * The opt-in schema-exact result types (`AniListStrict.*`): the same names with AniList's own
 * nullability. A lenient result is assignable to its strict twin, so annotating a result with
 * one opts that code into null checks.
 */
function renderStrictTypes(schema, catalog) {
  const { outputNames, outputEnums } = resultTypeNames(schema, catalog.operations);
  const lines = [
    '// Generated by scripts/generate-anilist.mjs from data/anilist-schema.json. Do not edit.',
    '// The schema-exact result types, exported as the `AniListStrict` namespace.',
    '',
    `import type { ${[...outputEnums].sort().join(', ')} } from "./anilist.generated";`,
    '',
    ...renderResults(schema, outputNames, true),
    ...renderPageResults(schema, catalog.operations, true),
  ];
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

function renderTypes(schema, catalog) {
  const operations = catalog.operations;
  const lines = [
    '// Generated by scripts/generate-anilist.mjs from data/anilist-schema.json. Do not edit.',
    '',
    'import type { RequestOptions as AniListRequestOptions } from "./transport";',
    '',
    'export type { AniListRequestOptions };',
    '',
    '/** Options of the operations that accept `fields`: dot-paths narrowing the selection. */',
    'export type AniListFieldsOptions = AniListRequestOptions & { fields?: readonly string[] };',
    '',
  ];

  const { inputNames, outputNames, outputEnums } = resultTypeNames(schema, operations);
  const enumNames = new Set([...inputNames].filter((name) => schema.type(name).kind === 'ENUM'));
  for (const name of outputEnums) enumNames.add(name);

  lines.push('// Enums', '');
  for (const name of [...enumNames].sort()) {
    const type = schema.type(name);
    lines.push(tsDocComment(type.description, '').trimEnd());
    lines.push(
      `export type ${name} =\n${type.enumValues.map((value) => `  | ${JSON.stringify(value.name)}`).join('\n')};`,
      '',
    );
  }

  lines.push('// Input objects', '');
  for (const name of [...inputNames].sort()) {
    const type = schema.type(name);
    if (type.kind !== 'INPUT_OBJECT') continue;
    lines.push(`${tsDocComment(type.description, '')}export interface ${name} {`);
    for (const field of type.inputFields) {
      const optional = field.type.kind !== 'NON_NULL';
      lines.push(
        `${tsDocComment(field.description, '  ')}  ${field.name}${optional ? '?' : ''}: ${tsInputType(schema, field.type)};`,
      );
    }
    lines.push('}', '');
  }

  lines.push('// Results', '', ...renderResults(schema, outputNames, false));

  lines.push('// Variables', '');
  for (const operation of operations) {
    const name = variablesInterfaceName(operation);
    const args = new Map(operationArguments(schema, operation).map((arg) => [arg.name, arg]));
    const hoistedTypes = schema.hoistedVariableTypes(collectOutputTypes(schema, [operation.itemType]));
    lines.push(`/** Variables of \`${operation.key}\`. */`);
    if (operation.variables.length === 0) {
      lines.push(`export type ${name} = Record<string, never>;`, '');
      continue;
    }
    lines.push(`export interface ${name} {`);
    for (const variable of operation.variables) {
      const arg = args.get(variable.name);
      if (!arg) {
        lines.push(`  /** ${hoistedVariableDescription(schema, variable.name)} */`);
        lines.push(`  ${variable.name}?: ${tsInputType(schema, hoistedTypes.get(variable.name))};`);
        continue;
      }
      const optional = arg.type.kind !== 'NON_NULL';
      lines.push(
        `${tsDocComment(arg.description, '  ')}  ${arg.name}${optional ? '?' : ''}: ${tsInputType(schema, arg.type)};`,
      );
    }
    lines.push('}', '');
  }

  lines.push('// Page results', '', ...renderPageResults(schema, operations, false));

  for (const kind of ['query', 'page', 'mutation']) {
    lines.push(`/** The \`${kind === 'page' ? 'query.page' : kind}\` operations of \`aniLink.anilist\`. */`);
    lines.push(`export interface ${GROUP_INTERFACES[kind]} {`);
    for (const operation of operations.filter((entry) => entry.kind === kind)) {
      const method = operationMethodName(operation.key);
      const variables = `variables${operation.variablesOptional ? '?' : ''}: ${variablesInterfaceName(operation)}`;
      const options = `options?: ${operation.acceptsFields ? 'AniListFieldsOptions' : 'AniListRequestOptions'}`;
      const result =
        operation.kind === 'page'
          ? `${upperFirst(method)}PageResult`
          : tsOutputType(schema, operationField(schema, operation).type);
      const auth = operation.requiresAuth ? ' Requires a token.' : '';
      lines.push(
        `  /** \`${operation.rootField}${operation.itemsField ? `.${operation.itemsField}` : ''}\`.${auth} */`,
      );
      lines.push(`  ${method}(${variables}, ${options}): Promise<${result}>;`);
    }
    lines.push('}', '');
  }
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

// ---------------------------------------------------------------------------------------------
// Entry point

function generate() {
  const schema = loadSchema();
  const catalog = buildCatalog(schema);
  return [
    { path: CATALOG_PATH, content: `${JSON.stringify(catalog, null, 2)}\n` },
    { path: TYPES_PATH, content: renderTypes(schema, catalog) },
    { path: STRICT_TYPES_PATH, content: renderStrictTypes(schema, catalog) },
  ];
}

function readIfPresent(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function main(argv) {
  const check = argv.includes('--check');
  const stale = [];
  for (const file of generate()) {
    if (readIfPresent(file.path) === file.content) continue;
    if (check) stale.push(relative(PROJECT_ROOT, file.path));
    else writeFileSync(file.path, file.content);
  }
  if (stale.length > 0) {
    console.error(`Stale generated file(s): ${stale.join(', ')}. Run: node scripts/generate-anilist.mjs`);
    process.exitCode = 1;
  }
}

main(process.argv.slice(2));
