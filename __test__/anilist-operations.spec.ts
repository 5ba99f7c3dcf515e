// End to end through the package entry: every one of the 72 typed AniList operations
// (api.md §9.1) against the scriptable test server. Each call must POST `{ query, variables }`
// with the catalog's default document and the caller's variables verbatim, send the JSON and
// bearer headers of api.md §10, and resolve the unwrapped root value (page operations: the
// `Page` object). Also covered: auth-required operations without a token, local validation
// (api.md §5), `fields` narrowing (api.md §4, §9.1) and the no-retry default of mutations (D1).
// Nothing that must be rejected locally may reach the server.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Kind, type SelectionSetNode } from 'graphql';
import { describe, expect, it } from 'vitest';

import { AniLink, AniLinkApiError, AniLinkAuthError, AniLinkError, AniLinkValidationError } from 'anilink-api-wrapper';
import { onlyOperation, schemaErrors } from './support/anilist-schema';
import { onlyRequest, rejectionOf, sentBody, useTestServer } from './support/helpers';
import { graphqlData, type TestServer } from './support/test-server';

interface CatalogVariable {
  name: string;
  type: string;
  hoisted?: boolean;
}

interface CatalogOperation {
  key: string;
  kind: 'query' | 'page' | 'mutation';
  rootField: string;
  itemsField: string | null;
  requiresAuth: boolean;
  acceptsFields: boolean;
  variables: CatalogVariable[];
  variablesOptional: boolean;
  requirements: { anyOf: string[]; message: string }[];
  defaultDocument: string;
}

interface CatalogInputType {
  kind: 'ENUM' | 'SCALAR' | 'INPUT_OBJECT';
  values?: string[];
  check?: string;
  fields?: Record<string, string>;
}

interface Catalog {
  operations: CatalogOperation[];
  inputTypes: Record<string, CatalogInputType>;
}

const root = join(__dirname, '..');
const catalog = JSON.parse(readFileSync(join(root, 'crates/providers/src/anilist/catalog.json'), 'utf8')) as Catalog;

/** The operation keys of api.md §9.1, written out so the facade is checked against the spec, not against itself. */
const SPEC_QUERY_KEYS = [
  'user',
  'media',
  'mediaTrend',
  'airingSchedule',
  'character',
  'staff',
  'mediaList',
  'mediaListCollection',
  'genreCollection',
  'mediaTagCollection',
  'viewer',
  'notification',
  'studio',
  'review',
  'activity',
  'activityReply',
  'following',
  'follower',
  'thread',
  'threadComment',
  'recommendation',
  'markdown',
  'aniChartUser',
  'siteStatistics',
  'externalLinkSourceCollection',
];
/** api.md §9.1 page operations and the `Page` field each one lists. */
const SPEC_PAGE_ITEMS: Record<string, string> = {
  users: 'users',
  medias: 'media',
  characters: 'characters',
  staffs: 'staff',
  studios: 'studios',
  mediaLists: 'mediaList',
  airingSchedules: 'airingSchedules',
  mediaTrends: 'mediaTrends',
  notifications: 'notifications',
  followers: 'followers',
  following: 'following',
  activities: 'activities',
  activityReplies: 'activityReplies',
  threads: 'threads',
  threadComments: 'threadComments',
  reviews: 'reviews',
  recommendations: 'recommendations',
  likes: 'likes',
};
const SPEC_MUTATION_KEYS = [
  'updateUser',
  'saveMediaListEntry',
  'updateMediaListEntries',
  'deleteMediaListEntry',
  'deleteCustomList',
  'saveTextActivity',
  'saveMessageActivity',
  'saveListActivity',
  'deleteActivity',
  'toggleActivityPin',
  'toggleActivitySubscription',
  'saveActivityReply',
  'deleteActivityReply',
  'toggleLike',
  'toggleLikeV2',
  'toggleFollow',
  'toggleFavourite',
  'updateFavouriteOrder',
  'saveReview',
  'rateReview',
  'deleteReview',
  'saveRecommendation',
  'saveThread',
  'deleteThread',
  'toggleThreadSubscription',
  'saveThreadComment',
  'deleteThreadComment',
  'updateAniChartSettings',
  'updateAniChartHighlights',
];
/** api.md §12 open points: the operations known to need a token. */
const SPEC_AUTH_KEYS = [
  'query.viewer',
  'query.notification',
  'query.page.notifications',
  ...SPEC_MUTATION_KEYS.map((name) => `mutation.${name}`),
];

/**
 * Variables api.md §9.1 lists by name for some operations (media's 70, mediaListCollection's
 * 24, user's 10, saveMediaListEntry's 16, updateUser's 16, page.likes): a drop-in must accept
 * every one of them.
 */
const SPEC_VARIABLE_NAMES: Record<string, string[]> = {
  'query.media': [
    'id',
    'idMal',
    'id_not',
    'id_in',
    'id_not_in',
    'idMal_not',
    'idMal_in',
    'idMal_not_in',
    'type',
    'format',
    'format_in',
    'format_not',
    'format_not_in',
    'status',
    'status_in',
    'status_not',
    'status_not_in',
    'episodes',
    'episodes_greater',
    'episodes_lesser',
    'duration',
    'duration_greater',
    'duration_lesser',
    'chapters',
    'chapters_greater',
    'chapters_lesser',
    'volumes',
    'volumes_greater',
    'volumes_lesser',
    'season',
    'seasonYear',
    'startDate',
    'startDate_greater',
    'startDate_lesser',
    'startDate_like',
    'endDate',
    'endDate_greater',
    'endDate_lesser',
    'endDate_like',
    'isAdult',
    'genre',
    'genre_in',
    'genre_not_in',
    'tag',
    'tag_in',
    'tag_not_in',
    'minimumTagRank',
    'tagCategory',
    'tagCategory_in',
    'tagCategory_not_in',
    'onList',
    'licensedBy',
    'licensedBy_in',
    'licensedById',
    'licensedById_in',
    'isLicensed',
    'averageScore',
    'averageScore_not',
    'averageScore_greater',
    'averageScore_lesser',
    'popularity',
    'popularity_not',
    'popularity_greater',
    'popularity_lesser',
    'source',
    'source_in',
    'countryOfOrigin',
    'search',
    'sort',
    'asHtml',
  ],
  'query.mediaListCollection': [
    'userId',
    'userName',
    'type',
    'status',
    'status_in',
    'status_not',
    'status_not_in',
    'notes',
    'notes_like',
    'startedAt',
    'startedAt_greater',
    'startedAt_lesser',
    'startedAt_like',
    'completedAt',
    'completedAt_greater',
    'completedAt_lesser',
    'completedAt_like',
    'forceSingleCompletedList',
    'chunk',
    'perChunk',
    'sort',
    'scoreFormat',
    'asArray',
    'asHtml',
  ],
  'query.user': [
    'id',
    'name',
    'isModerator',
    'search',
    'sort',
    'asHtml',
    'animeStatLimit',
    'mangaStatLimit',
    'animeStatSort',
    'mangaStatSort',
  ],
  'mutation.saveMediaListEntry': [
    'id',
    'mediaId',
    'status',
    'score',
    'scoreRaw',
    'progress',
    'progressVolumes',
    'repeat',
    'priority',
    'private',
    'notes',
    'hiddenFromStatusLists',
    'customLists',
    'advancedScores',
    'startedAt',
    'completedAt',
  ],
  'mutation.updateUser': [
    'about',
    'titleLanguage',
    'displayAdultContent',
    'airingNotifications',
    'scoreFormat',
    'rowOrder',
    'profileColor',
    'donatorBadge',
    'notificationOptions',
    'timezone',
    'activityMergeTime',
    'animeListOptions',
    'mangaListOptions',
    'staffNameLanguage',
    'restrictMessagesToFollowing',
    'disabledListActivity',
  ],
  'query.page.likes': ['page', 'perPage', 'likeableId', 'type'],
};
/** Values for the spec variables the catalog does not declare (their AniList types). */
const SPEC_ONLY_SAMPLES: Record<string, unknown> = {
  animeStatLimit: 5,
  mangaStatLimit: 5,
  animeStatSort: ['COUNT_DESC'],
  mangaStatSort: ['COUNT_DESC'],
  scoreFormat: 'POINT_100',
};

const TOKEN = 'anilist-token';

type Operation = (variables?: unknown, options?: unknown) => Promise<unknown>;

/** `aniLink.anilist.query.X`, `query.page.X` or `mutation.X` for a catalog key. */
function operationOf(client: AniLink, key: string): Operation {
  const path = key.split('.');
  let target: unknown = client.anilist;
  for (const segment of path) target = (target as Record<string, unknown>)[segment];
  if (typeof target !== 'function') throw new Error(`aniLink.anilist.${key} is not a function`);
  return target as Operation;
}

/** A valid value of a GraphQL input type reference (`Int!`, `[MediaSort]`, `FuzzyDateInput`…). */
function sampleValue(typeRef: string): unknown {
  const nullable = typeRef.endsWith('!') ? typeRef.slice(0, -1) : typeRef;
  if (nullable.startsWith('[')) return [sampleValue(nullable.slice(1, -1))];
  if (nullable === 'FuzzyDateInt') return 20240315;
  if (nullable === 'CountryCode') return 'JP';
  const type = catalog.inputTypes[nullable];
  if (!type) throw new Error(`catalog.json has no input type ${nullable}`);
  if (type.kind === 'ENUM') return type.values?.at(-1);
  if (type.kind === 'INPUT_OBJECT') {
    return Object.fromEntries(Object.entries(type.fields ?? {}).map(([name, field]) => [name, sampleValue(field)]));
  }
  switch (type.check) {
    case 'int':
      return 7;
    case 'float':
      return 7.5;
    case 'boolean':
      return true;
    default:
      return 'sample text';
  }
}

function typeOf(operation: CatalogOperation, name: string): string {
  const variable = operation.variables.find((entry) => entry.name === name);
  if (!variable) throw new Error(`${operation.key} has no variable ${name}`);
  return variable.type;
}

/** Non-null variables, plus the first variable of every per-operation requirement (`media` needs a filter). */
function minimalVariables(operation: CatalogOperation): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const variable of operation.variables) {
    if (variable.type.endsWith('!')) variables[variable.name] = sampleValue(variable.type);
  }
  for (const requirement of operation.requirements) {
    if (requirement.anyOf.some((name) => name in variables)) continue;
    const [name] = requirement.anyOf;
    variables[name] = sampleValue(typeOf(operation, name));
  }
  return variables;
}

/** Every variable the operation declares, each with a valid value. */
function everyVariable(operation: CatalogOperation): Record<string, unknown> {
  return Object.fromEntries(operation.variables.map((variable) => [variable.name, sampleValue(variable.type)]));
}

/** What the server answers for the root field: page operations get a Page with one item. */
function sampleResult(operation: CatalogOperation): unknown {
  if (operation.kind === 'page') {
    return {
      pageInfo: { total: 1, perPage: 1, currentPage: 1, lastPage: 1, hasNextPage: false },
      [operation.itemsField ?? 'items']: [{ id: 42, marker: operation.key }],
    };
  }
  return { id: 42, marker: operation.key };
}

/**
 * A selection set as a nested object: scalars map to `true`, objects to their own selection,
 * inline fragments (union results) to `"... on Type"` keys.
 */
type SelectionTree = { [field: string]: true | SelectionTree };
function selectionTree(selectionSet: SelectionSetNode | undefined): SelectionTree {
  const tree: SelectionTree = {};
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) {
      tree[selection.name.value] = selection.selectionSet ? selectionTree(selection.selectionSet) : true;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      tree[`... on ${selection.typeCondition?.name.value}`] = selectionTree(selection.selectionSet);
    } else {
      throw new Error('catalog documents never use named fragments');
    }
  }
  return tree;
}

/** The selection under the document's root field (and under `Page` for page operations). */
function rootSelection(document: string): SelectionTree {
  return selectionTree(onlyOperation(document).selectionSet);
}

/** Assert a call rejected with AniLinkValidationError carrying exactly these details, nothing sent. */
async function expectValidationError(call: Promise<unknown>, server: TestServer): Promise<readonly string[]> {
  const validation = await rejectionOf<AniLinkValidationError>(call);
  expect(validation).toBeInstanceOf(AniLinkValidationError);
  expect(validation).toBeInstanceOf(AniLinkError);
  expect(validation.code).toBe('VALIDATION_ERROR');
  expect(validation.details.length).toBeGreaterThan(0);
  expect(validation.message).toBe(`Request variables are invalid:\n${validation.details.join('\n')}`);
  expect(server.requests).toHaveLength(0);
  return validation.details;
}

let server: TestServer;
let authed: AniLink;
let anonymous: AniLink;

useTestServer((started) => {
  server = started;
  authed = new AniLink({ anilist: { baseUrl: server.url, authToken: TOKEN } });
  anonymous = new AniLink(undefined, { baseUrl: server.url });
});

describe('the operation surface', () => {
  it('exposes exactly the 25 queries, 18 page queries and 29 mutations of api.md §9.1', () => {
    const { query, mutation } = authed.anilist;
    expect(
      Object.keys(query)
        .filter((key) => key !== 'page')
        .sort(),
    ).toEqual([...SPEC_QUERY_KEYS].sort());
    expect(Object.keys(query.page).sort()).toEqual(Object.keys(SPEC_PAGE_ITEMS).sort());
    expect(Object.keys(mutation).sort()).toEqual([...SPEC_MUTATION_KEYS].sort());
  });

  it('holds query.page in an enumerable, non-writable property', () => {
    const descriptor = Object.getOwnPropertyDescriptor(authed.anilist.query, 'page');
    expect(descriptor?.enumerable).toBe(true);
    expect(descriptor?.writable).toBe(false);
  });

  it('has a catalog entry for every operation of the spec, and no other', () => {
    const specKeys = [
      ...SPEC_QUERY_KEYS.map((name) => `query.${name}`),
      ...Object.keys(SPEC_PAGE_ITEMS).map((name) => `query.page.${name}`),
      ...SPEC_MUTATION_KEYS.map((name) => `mutation.${name}`),
    ];
    expect(catalog.operations.map((operation) => operation.key).sort()).toEqual(specKeys.sort());
  });
});

describe.each(catalog.operations.map((operation) => [operation.key, operation] as const))(
  'anilist.%s',
  (key, operation) => {
    it('POSTs the default document with the minimal variables and resolves the unwrapped result', async () => {
      const variables = minimalVariables(operation);
      const given = Object.keys(variables).length === 0 && operation.variablesOptional ? undefined : variables;
      const result = sampleResult(operation);
      server.enqueue({ body: graphqlData(operation.rootField, result) });

      await expect(operationOf(authed, key)(given)).resolves.toEqual(result);

      const request = onlyRequest(server);
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/');
      expect(request.headers['content-type']).toMatch(/^application\/json\b/);
      expect(request.headers.accept).toMatch(/^application\/json\b/);
      expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(sentBody(request)).toEqual({ query: operation.defaultDocument, variables });
    });

    it('forwards every declared variable verbatim', async () => {
      const variables = everyVariable(operation);
      server.enqueue({ body: graphqlData(operation.rootField, sampleResult(operation)) });

      await operationOf(authed, key)(variables);

      const body = sentBody(onlyRequest(server));
      expect(body.query).toBe(operation.defaultDocument);
      expect(body.variables).toEqual(variables);
    });

    if (operation.requiresAuth) {
      it('rejects with AniLinkAuthError without a token, before any request', async () => {
        const error = await operationOf(
          anonymous,
          key,
        )(minimalVariables(operation)).catch((failure: unknown) => failure);
        expect(error).toBeInstanceOf(AniLinkAuthError);
        expect((error as AniLinkAuthError).code).toBe('AUTH_ERROR');
        expect((error as Error).message).toMatch(/^This operation requires an authentication token\./);
        expect(server.requests).toHaveLength(0);
      });
    } else {
      it('works without a token and sends no authorization header', async () => {
        const result = sampleResult(operation);
        server.enqueue({ body: graphqlData(operation.rootField, result) });
        await expect(operationOf(anonymous, key)(minimalVariables(operation))).resolves.toEqual(result);
        expect(onlyRequest(server).headers.authorization).toBeUndefined();
      });
    }
  },
);

describe('auth rules of the spec', () => {
  it.each(SPEC_AUTH_KEYS)('%s needs a token', async (key) => {
    const operation = catalog.operations.find((entry) => entry.key === key);
    expect(operation?.requiresAuth).toBe(true);
    await expect(operationOf(anonymous, key)(operation && minimalVariables(operation))).rejects.toBeInstanceOf(
      AniLinkAuthError,
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe('variables named by api.md §9.1', () => {
  it.each(Object.entries(SPEC_VARIABLE_NAMES))(
    '%s accepts every one of them and forwards them verbatim',
    async (key, names) => {
      const operation = catalog.operations.find((entry) => entry.key === key);
      if (!operation) throw new Error(`no catalog entry for ${key}`);
      const variables = Object.fromEntries(
        names.map((name) => {
          const declared = operation.variables.find((variable) => variable.name === name);
          return [name, declared ? sampleValue(declared.type) : SPEC_ONLY_SAMPLES[name]];
        }),
      );
      server.enqueue({ body: graphqlData(operation.rootField, sampleResult(operation)) });

      await expect(operationOf(authed, key)(variables)).resolves.toEqual(sampleResult(operation));

      const body = sentBody(onlyRequest(server));
      expect(body.variables).toEqual(variables);
      expect(schemaErrors(body.query)).toEqual([]);
    },
  );
});

/**
 * The variables the original passes to the connections of a nested field (read in its operation
 * documents: `character`'s `media(sort: $mediaSort, …)`, `staff`'s `staffMedia`, `characters`
 * and `characterMedia`, `siteStatistics`' trend connections), each with the `fields` paths that
 * select those connections (the default documents of single results select them already).
 */
const STAFF_CONNECTION_VARIABLES = [
  'staffMediaSort',
  'staffMediaType',
  'staffMediaOnList',
  'staffMediaPage',
  'staffMediaPerPage',
  'charactersSort',
  'charactersPage',
  'charactersPerPage',
  'characterMediaSort',
  'characterMediaOnList',
  'characterMediaPage',
  'characterMediaPerPage',
];
const STAFF_CONNECTION_FIELDS = ['staffMedia.nodes.id', 'characters.nodes.id', 'characterMedia.nodes.id'];
const CHARACTER_CONNECTION_VARIABLES = ['mediaSort', 'mediaOnList', 'mediaPage', 'mediaPerPage'];
const STUDIO_CONNECTION_VARIABLES = [
  'mediaSort',
  'mediaIsMain',
  'mediaOnList',
  'mediaPage',
  'mediaPerPage',
  ...STAFF_CONNECTION_VARIABLES,
];
const STUDIO_CONNECTION_FIELDS = [
  'media.nodes.id',
  ...STAFF_CONNECTION_FIELDS.map((path) => `media.nodes.staff.nodes.${path}`),
];
const SITE_STATISTICS_VARIABLES = ['users', 'anime', 'manga', 'characters', 'staff', 'studios', 'reviews'].flatMap(
  (field) => ['Sort', 'Page', 'PerPage'].map((argument) => `${field}${argument}`),
);
const ORIGINAL_CONNECTION_VARIABLES: [key: string, names: string[], fields: string[]][] = [
  ['query.character', CHARACTER_CONNECTION_VARIABLES, ['media.nodes.id']],
  ['query.page.characters', CHARACTER_CONNECTION_VARIABLES, ['media.nodes.id']],
  ['query.staff', STAFF_CONNECTION_VARIABLES, STAFF_CONNECTION_FIELDS],
  ['query.page.staffs', STAFF_CONNECTION_VARIABLES, STAFF_CONNECTION_FIELDS],
  ['query.studio', STUDIO_CONNECTION_VARIABLES, STUDIO_CONNECTION_FIELDS],
  ['query.page.studios', STUDIO_CONNECTION_VARIABLES, STUDIO_CONNECTION_FIELDS],
  [
    'query.siteStatistics',
    SITE_STATISTICS_VARIABLES,
    [
      'users.nodes.date',
      'anime.nodes.date',
      'manga.nodes.date',
      'characters.nodes.date',
      'staff.nodes.date',
      'studios.nodes.date',
      'reviews.nodes.date',
    ],
  ],
];

/** The names of the variables a document declares. */
function declaredVariables(document: string): string[] {
  return (onlyOperation(document).variableDefinitions ?? []).map((definition) => definition.variable.name.value);
}

describe("the original's nested-connection variables", () => {
  it.each(ORIGINAL_CONNECTION_VARIABLES)(
    '%s accepts them and binds each one in the document',
    async (key, names, fields) => {
      const operation = catalog.operations.find((entry) => entry.key === key);
      if (!operation) throw new Error(`no catalog entry for ${key}`);
      const variables = Object.fromEntries(names.map((name) => [name, sampleValue(typeOf(operation, name))]));
      server.enqueue({ body: graphqlData(operation.rootField, sampleResult(operation)) });

      await operationOf(authed, key)({ ...minimalVariables(operation), ...variables }, { fields });

      const body = sentBody(onlyRequest(server));
      expect(body.variables).toMatchObject(variables);
      // Declared, and graphql-js refuses a declared variable no argument uses.
      expect(declaredVariables(body.query)).toEqual(expect.arrayContaining(names));
      expect(schemaErrors(body.query)).toEqual([]);
    },
  );

  it.each([
    [
      'query.character',
      'media(sort: $mediaSort, type: $mediaType, onList: $mediaOnList, page: $mediaPage, perPage: $mediaPerPage) { nodes {',
    ],
    [
      'query.staff',
      'characterMedia(sort: $characterMediaSort, onList: $characterMediaOnList, page: $characterMediaPage, perPage: $characterMediaPerPage) { nodes {',
    ],
    [
      'query.studio',
      'media(sort: $mediaSort, isMain: $mediaIsMain, onList: $mediaOnList, page: $mediaPage, perPage: $mediaPerPage) { nodes {',
    ],
  ])('the default document of %s selects the connection with its variables', async (key, binding) => {
    const operation = catalog.operations.find((entry) => entry.key === key);
    if (!operation) throw new Error(`no catalog entry for ${key}`);
    server.enqueue({ body: graphqlData(operation.rootField, sampleResult(operation)) });

    await operationOf(authed, key)({ id: 1, mediaPage: 2, mediaPerPage: 5 });

    const body = sentBody(onlyRequest(server));
    expect(body.query).toBe(operation.defaultDocument);
    expect(body.query).toContain(binding);
    expect(body.variables).toEqual({ id: 1, mediaPage: 2, mediaPerPage: 5 });
  });

  it('rejects a wrongly typed nested-connection variable before any request', async () => {
    const details = await expectValidationError(
      authed.anilist.query.character({ id: 1, mediaSort: ['NOPE'] as never }),
      server,
    );
    expect(details[0]).toMatch(/^Invalid mediaSort\[0\]: "NOPE"\. Expected one of: /);
  });
});

describe('page operations', () => {
  it.each(Object.entries(SPEC_PAGE_ITEMS))(
    'page.%s selects pageInfo and the Page field %s',
    async (name, itemsField) => {
      const operation = catalog.operations.find((entry) => entry.key === `query.page.${name}`);
      if (!operation) throw new Error(`no catalog entry for query.page.${name}`);
      const page = { pageInfo: { hasNextPage: true, currentPage: 2 }, [itemsField]: [{ id: 1 }, { id: 2 }] };
      server.enqueue({ body: graphqlData('Page', page) });

      await expect(
        operationOf(authed, operation.key)({ ...minimalVariables(operation), page: 2, perPage: 2 }),
      ).resolves.toEqual(page);

      const selection = rootSelection(sentBody(onlyRequest(server)).query);
      expect(Object.keys(selection)).toEqual(['Page']);
      expect(Object.keys(selection.Page as SelectionTree)).toEqual(['pageInfo', itemsField]);
      expect((selection.Page as SelectionTree).pageInfo).toMatchObject({ hasNextPage: true });
    },
  );
});

describe('validation before dispatch (api.md §5)', () => {
  it.each([
    ['a string for an Int', { id: '1' }, 'Invalid id: "1". Expected type: Int'],
    ['a fraction for an Int', { id: 1.5 }, 'Invalid id: 1.5. Expected type: Int'],
    ['a number for a String', { search: 5 }, 'Invalid search: 5. Expected type: String'],
    ['a string for a Boolean', { id: 1, isAdult: 'no' }, 'Invalid isAdult: "no". Expected type: Boolean'],
  ])('rejects %s', async (_label, variables, detail) => {
    expect(await expectValidationError(authed.anilist.query.media(variables as never), server)).toEqual([detail]);
  });

  it('accepts null for a nullable variable and forwards it verbatim', async () => {
    await authed.anilist.query.media({ id: 1, type: null } as never);
    expect(sentBody(onlyRequest(server)).variables).toEqual({ id: 1, type: null });
  });

  it('rejects a bad enum value and lists the allowed ones', async () => {
    const details = await expectValidationError(authed.anilist.query.media({ id: 1, type: 'TV' } as never), server);
    expect(details).toEqual(['Invalid type: "TV". Expected one of: ANIME, MANGA']);
  });

  it('rejects a bad enum value inside a list, naming its index', async () => {
    const details = await expectValidationError(
      authed.anilist.query.page.medias({ sort: ['POPULARITY_DESC', 'BEST'] } as never),
      server,
    );
    expect(details).toEqual([
      `Invalid sort[1]: "BEST". Expected one of: ${catalog.inputTypes.MediaSort.values?.join(', ')}`,
    ]);
  });

  it('rejects an unknown variable', async () => {
    const details = await expectValidationError(authed.anilist.query.media({ id: 1, idd: 2 } as never), server);
    expect(details).toEqual(['Unknown variable: idd']);
  });

  it('rejects a missing non-null variable, naming it', async () => {
    const details = await expectValidationError(authed.anilist.query.follower({} as never), server);
    expect(details).toHaveLength(1);
    expect(details[0]).toContain('userId');
  });

  it('rejects media({}) and media({ asHtml }) with the Media requirement', async () => {
    const message = 'The Media query requires at least one filter variable.';
    expect(await expectValidationError(authed.anilist.query.media({}), server)).toEqual([message]);
    expect(await expectValidationError(authed.anilist.query.media({ asHtml: true }), server)).toEqual([message]);
  });

  it('checks input objects field by field', async () => {
    const details = await expectValidationError(
      authed.anilist.mutation.saveMediaListEntry({ mediaId: 1, startedAt: { year: '2024', hour: 3 } } as never),
      server,
    );
    expect([...details].sort()).toEqual(
      ['Invalid startedAt.year: "2024". Expected type: Int', 'Unknown property: startedAt.hour'].sort(),
    );
    expect(
      await expectValidationError(
        authed.anilist.mutation.saveMediaListEntry({ mediaId: 1, completedAt: 5 } as never),
        server,
      ),
    ).toEqual(['Invalid completedAt: 5. Expected an object.']);
  });

  it('reports every problem at once', async () => {
    const details = await expectValidationError(
      authed.anilist.query.media({ id: 'x', type: 'FOO', bogus: 1 } as never),
      server,
    );
    expect([...details].sort()).toEqual(
      [
        'Invalid id: "x". Expected type: Int',
        'Invalid type: "FOO". Expected one of: ANIME, MANGA',
        'Unknown variable: bogus',
      ].sort(),
    );
  });

  it('rejects variables that are not an object', async () => {
    await expectValidationError(authed.anilist.query.media('1' as never), server);
  });

  it('rejects bad fields paths, listing every one of them', async () => {
    const details = await expectValidationError(
      authed.anilist.query.media({ id: 1 }, { fields: ['title.romaji', 'title.nope', 'id.sub', 'zzz'] }),
      server,
    );
    expect(details).toHaveLength(3);
    for (const bad of ['title.nope', 'id.sub', 'zzz'])
      expect(details.some((detail) => detail.includes(bad))).toBe(true);
    expect(details.some((detail) => detail.includes('title.romaji'))).toBe(false);
  });

  it('rejects an empty fields selection', async () => {
    await expectValidationError(authed.anilist.query.media({ id: 1 }, { fields: [] }), server);
  });
});

describe('fields narrowing (api.md §9.1)', () => {
  function expectValidDocument(document: string): void {
    expect(schemaErrors(document)).toEqual([]);
  }

  it('selects the requested paths, merged by head, plus id and idMal for media', async () => {
    server.enqueue({ body: graphqlData('Media', { id: 1, idMal: 2, title: { romaji: 'r', english: 'e' }, tags: [] }) });

    await authed.anilist.query.media({ id: 1 }, { fields: ['title.romaji', 'tags.name', 'title.english'] });

    const body = sentBody(onlyRequest(server));
    expect(body.variables).toEqual({ id: 1 });
    expect(rootSelection(body.query)).toEqual({
      Media: { id: true, idMal: true, title: { romaji: true, english: true }, tags: { name: true } },
    });
    expectValidDocument(body.query);
  });

  it('keeps the variables a narrowed field needs (description(asHtml: $asHtml))', async () => {
    server.enqueue({ body: graphqlData('Media', { id: 1, idMal: null, description: '<p>x</p>' }) });

    await authed.anilist.query.media({ id: 1, asHtml: true }, { fields: ['description'] });

    const body = sentBody(onlyRequest(server));
    expect(body.variables).toEqual({ id: 1, asHtml: true });
    expect(body.query).toContain('description(asHtml: $asHtml)');
    expectValidDocument(body.query);
  });

  it('keeps the whole pageInfo block on page operations', async () => {
    const operation = catalog.operations.find((entry) => entry.key === 'query.page.medias');
    const defaultPageInfo = (rootSelection(operation?.defaultDocument ?? '').Page as SelectionTree).pageInfo;
    server.enqueue({ body: graphqlData('Page', { pageInfo: { hasNextPage: false }, media: [] }) });

    await authed.anilist.query.page.medias({ page: 2, perPage: 5 }, { fields: ['title.romaji'] });

    const body = sentBody(onlyRequest(server));
    expect(body.variables).toEqual({ page: 2, perPage: 5 });
    expect(rootSelection(body.query)).toEqual({
      Page: { pageInfo: defaultPageInfo, media: { id: true, idMal: true, title: { romaji: true } } },
    });
    expectValidDocument(body.query);
  });

  it('forces nothing on mediaTrend', async () => {
    server.enqueue({ body: graphqlData('MediaTrend', { trending: 5 }) });

    await authed.anilist.query.mediaTrend({ mediaId: 1 }, { fields: ['trending'] });

    expect(rootSelection(sentBody(onlyRequest(server)).query)).toEqual({ MediaTrend: { trending: true } });
  });

  it('narrows mutations too, keeping the document a mutation', async () => {
    server.enqueue({ body: graphqlData('SaveMediaListEntry', { id: 9, status: 'CURRENT' }) });

    await authed.anilist.mutation.saveMediaListEntry({ mediaId: 1, status: 'CURRENT' }, { fields: ['status'] });

    const body = sentBody(onlyRequest(server));
    expect(onlyOperation(body.query).operation).toBe('mutation');
    expect(rootSelection(body.query)).toEqual({ SaveMediaListEntry: { id: true, status: true } });
    expectValidDocument(body.query);
  });
});

describe('retries (decisions D1)', () => {
  const unavailable = { status: 503, body: { errors: [{ message: 'Service Unavailable', status: 503 }] } };

  it('sends a mutation once by default, even on a 503', async () => {
    server.setDefault(unavailable);

    const error = await authed.anilist.mutation
      .saveMediaListEntry({ mediaId: 1, status: 'CURRENT' })
      .catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(AniLinkApiError);
    expect((error as AniLinkApiError).status).toBe(503);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a query under the default policy', async () => {
    server.enqueue(unavailable, { body: graphqlData('Media', { id: 1 }) });

    await expect(authed.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect(server.requests).toHaveLength(2);
  });

  it('retries a mutation when the request opts in with a policy', async () => {
    server.setDefault(unavailable);

    await expect(
      authed.anilist.mutation.toggleFollow({ userId: 1 }, { retry: { maxRetries: 2, baseDelayMs: 5, jitter: false } }),
    ).rejects.toBeInstanceOf(AniLinkApiError);
    expect(server.requests).toHaveLength(3);
  });

  it('retries a mutation when the slot opts in with a policy', async () => {
    const optedIn = new AniLink({
      anilist: { baseUrl: server.url, authToken: TOKEN, retry: { baseDelayMs: 5, jitter: false } },
    });
    server.setDefault(unavailable);

    await expect(optedIn.anilist.mutation.deleteMediaListEntry({ id: 1 })).rejects.toBeInstanceOf(AniLinkApiError);
    expect(server.requests).toHaveLength(4);
  });
});
