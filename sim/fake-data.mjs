/**
 * Deterministic, plausible data for whatever a GraphQL document selects.
 *
 * graphql-js walks the selection (fragments, aliases, `@include`, variables, unions) and calls
 * `resolveField` for every field; this module only decides values. Every object handed down
 * is a "node": an entity (a type with an `id` field: Media, User, MediaList, …) or a value
 * object (MediaTitle, FuzzyDate, PageInfo, …) that belongs to the nearest entity.
 *
 * Determinism: an entity's values derive from its type and id alone, so `Media(id: 5)` looks
 * the same in every query that reaches it. Plausibility: values follow the field's name and
 * type (years, scores, epoch seconds, image URLs, enum members of the schema), the arguments
 * of the field that produced an entity are echoed into its same-named fields (a
 * `SaveMediaListEntry(mediaId: 5, status: CURRENT)` returns `mediaId: 5, status: CURRENT`), and
 * `Page`/connection item lists agree with their `pageInfo`.
 */
import {
  getNamedType,
  getNullableType,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isListType,
  isObjectType,
} from 'graphql';

/**
 * Ids the simulator makes up (related entities, connection items) fall in 1..GENERATED_ID_RANGE.
 * Ids a caller asks for are served whatever their size: AniList user ids are in the millions.
 */
const GENERATED_ID_RANGE = 100_000;
/** AniList caps `perPage` at 50; connections default to 25 and a `Page` to 50. */
const MAX_PER_PAGE = 50;
const DEFAULT_CONNECTION_PER_PAGE = 25;
const DEFAULT_PAGE_PER_PAGE = 50;
const GENRES = [
  'Action',
  'Adventure',
  'Comedy',
  'Drama',
  'Fantasy',
  'Mystery',
  'Romance',
  'Sci-Fi',
  'Slice of Life',
  'Sports',
];
const COUNTRIES = ['JP', 'JP', 'JP', 'KR', 'CN', 'TW'];
const MEDIA_FORMATS = {
  ANIME: ['TV', 'TV', 'TV', 'TV_SHORT', 'MOVIE', 'SPECIAL', 'OVA', 'ONA'],
  MANGA: ['MANGA', 'MANGA', 'NOVEL', 'ONE_SHOT'],
};
const EPOCH_2020 = 1_577_836_800;
const FOUR_YEARS_S = 4 * 365 * 24 * 3600;
const IMAGE_HOST = 'https://img.anilist-sim.invalid';

/** Thrown by a resolver to produce an AniList-style error entry with this status. */
class SimulatedNotFound extends Error {
  status = 404;
  constructor() {
    super('Not Found.');
  }
}

/**
 * @param {{ pageTotal: number, isMissing?: (id: number) => boolean }} options `pageTotal` is the
 *   fixed `total` of every root `Page`; `isMissing` names the ids a root lookup answers 404 for
 *   (besides ids below 1, which never exist)
 * @returns the `fieldResolver` and the root values to give `execute`
 */
export function createDataGenerator({ pageTotal, isMissing = () => false }) {
  const rootNode = (typename) => ({
    typename,
    entityType: typename,
    id: 0,
    seed: hash(typename),
    label: 'Simulated AniList',
    echo: new Map(),
  });

  /** graphql-js `fieldResolver`: the value of one field of `node`. */
  function resolveField(node, args, _context, info) {
    const field = info.parentType.getFields()[info.fieldName];
    const echoed = node.echo.get(info.fieldName);
    if (echoed !== undefined && sameShape(echoed.type, field.type)) return echoed.value;
    const request = { node, args, info, field, index: undefined };
    // An input object argument (`startedAt: FuzzyDateInput`) shapes the same-named object
    // field (`startedAt: FuzzyDate`): the parts it gives are echoed, the rest made up.
    if (echoed !== undefined && echoesInto(echoed.type, field.type)) {
      const value = makeNode(getNamedType(field.type), request);
      for (const [name, part] of Object.entries(echoed.value)) {
        const input = getNamedType(echoed.type).getFields()[name];
        if (part !== null && input !== undefined) value.echo.set(name, { value: part, type: input.type });
      }
      return value;
    }
    return produce(field.type, request);
  }

  function produce(type, request) {
    const nullable = getNullableType(type);
    if (isListType(nullable)) {
      const count = listLength(request.node, request.info.fieldName, nullable.ofType);
      return Array.from({ length: count }, (_, index) => produce(nullable.ofType, { ...request, index }));
    }
    const named = getNamedType(nullable);
    if (isEnumType(named)) return enumValue(named, request);
    if (isObjectType(named) || isAbstractType(named)) return makeNode(named, request);
    return scalarValue(named.name, request);
  }

  function listLength(node, fieldName, itemType) {
    const named = getNamedType(itemType);
    if (node.pagination && (isObjectType(named) || isAbstractType(named))) return itemsOnPage(node.pagination);
    return 1 + (hash(node.seed, fieldName) % 3);
  }

  function makeNode(named, { node: parent, args, info, field, index }) {
    const fieldName = info.fieldName;
    const concrete = isAbstractType(named)
      ? pick(selectedMemberTypes(named, info), hash(parent.seed, fieldName, index, stableJson(args)))
      : named;
    const fields = concrete.getFields();
    const isEntity = 'id' in fields;
    const id = isEntity ? entityId(parent, args, info, index) : parent.id;
    const seed = isEntity ? hash(concrete.name, id) : hash(parent.seed, fieldName, index);
    const kind = concrete.name === 'Media' ? mediaKind(args, seed) : parent.kind;
    let pagination;
    if ('pageInfo' in fields) pagination = paginationOf(args, seed, parent.typename === 'Query');
    else if (fieldName === 'pageInfo') pagination = parent.pagination;
    return {
      typename: concrete.name,
      __typename: concrete.name, // how graphql-js picks the member of a union or interface
      // A value object (MediaTitle, FuzzyDate, …) describes the entity that owns it.
      entityType: isEntity ? concrete.name : parent.entityType,
      id,
      seed,
      kind,
      label: isEntity ? entityLabel(concrete.name, id, kind) : parent.label,
      echo: echoOf(field, args),
      pagination,
    };
  }

  function entityId(parent, args, info, index) {
    const fieldName = info.fieldName;
    if (typeof args.id === 'number') {
      const atRoot = info.parentType === info.schema.getQueryType();
      if (atRoot && (args.id < 1 || isMissing(args.id))) throw new SimulatedNotFound();
      return args.id;
    }
    if (parent.pagination && index !== undefined) {
      return parent.pagination.firstId + (parent.pagination.page - 1) * parent.pagination.perPage + index;
    }
    if (fieldName === 'node') return parent.id; // an edge and its node describe the same entity
    if (`${fieldName}Id` in info.parentType.getFields()) return relatedId(parent, fieldName);
    return 1 + (hash(parent.seed, fieldName, index, stableJson(args)) % GENERATED_ID_RANGE);
  }

  /** Used for both `mediaId` and `media { id }` on the same object, so the two agree. */
  function relatedId(node, relation) {
    const echoed = node.echo.get(`${relation}Id`)?.value;
    return typeof echoed === 'number' ? echoed : 1 + (hash(node.seed, relation) % GENERATED_ID_RANGE);
  }

  function paginationOf(args, seed, isRootPage) {
    const defaultPerPage = isRootPage ? DEFAULT_PAGE_PER_PAGE : DEFAULT_CONNECTION_PER_PAGE;
    return {
      page: Math.max(1, args.page ?? 1),
      perPage: Math.min(MAX_PER_PAGE, Math.max(1, args.perPage ?? defaultPerPage)),
      total: isRootPage ? pageTotal : 1 + (hash(seed, 'total') % 3),
      firstId: isRootPage ? 1 : 1 + (hash(seed, 'firstId') % (GENERATED_ID_RANGE - 1000)),
    };
  }

  function enumValue(enumType, { node, info, index }) {
    const seed = hash(node.seed, info.fieldName, index);
    if (node.typename === 'Media' && info.fieldName === 'type') return node.kind;
    if (node.typename === 'Media' && info.fieldName === 'format') return pick(MEDIA_FORMATS[node.kind], seed);
    const current = enumType.getValues().filter((value) => !value.deprecationReason);
    return pick(current, seed).value;
  }

  function scalarValue(scalar, { node, info, index }) {
    const fieldName = info.fieldName;
    const seed = hash(node.seed, fieldName, index);
    switch (scalar) {
      case 'Int':
        return intValue(fieldName, node, seed, info);
      case 'Float':
        return inRange(seed, 100, 1000) / 10;
      case 'Boolean':
        return booleanValue(fieldName, node, seed);
      case 'String':
        return stringValue(fieldName, node, seed, index);
      case 'ID':
        return String(node.id);
      case 'FuzzyDateInt':
        return inRange(seed, 1995, 2025) * 10000 + inRange(seed >>> 4, 1, 12) * 100 + inRange(seed >>> 8, 1, 28);
      case 'CountryCode':
        return pick(COUNTRIES, seed);
      case 'Json':
        return {};
      default:
        return null;
    }
  }

  function intValue(fieldName, node, seed, info) {
    if (fieldName === 'id' || fieldName === 'idMal') return node.id;
    if (node.typename === 'PageInfo' && node.pagination) return pageInfoValue(fieldName, node.pagination);
    if (fieldName.endsWith('Id') && fieldName.slice(0, -2) in info.parentType.getFields()) {
      return relatedId(node, fieldName.slice(0, -2));
    }
    if (/year/i.test(fieldName)) return inRange(seed, 1995, 2025);
    if (fieldName === 'month') return inRange(seed, 1, 12);
    if (fieldName === 'day') return inRange(seed, 1, 28);
    if (/At$/.test(fieldName)) return EPOCH_2020 + (seed % FOUR_YEARS_S);
    if (fieldName === 'timeUntilAiring') return inRange(seed, 3600, 7 * 24 * 3600);
    if (fieldName === 'episodes') return inRange(seed, 10, 52);
    if (fieldName === 'episode' || fieldName === 'progress') return inRange(seed, 1, 24);
    if (fieldName === 'chapters') return inRange(seed, 20, 300);
    if (fieldName === 'volumes' || fieldName === 'progressVolumes') return inRange(seed, 1, 30);
    if (fieldName === 'duration') return inRange(seed, 20, 30);
    if (/score|rating/i.test(fieldName)) return inRange(seed, 50, 95);
    if (fieldName === 'priority') return inRange(seed, 0, 2);
    if (fieldName === 'repeat') return inRange(seed, 0, 3);
    if (/rank|order|position/i.test(fieldName)) return inRange(seed, 1, 500);
    if (/popularity|favourites|count|trending|amount/i.test(fieldName)) return inRange(seed, 0, 50_000);
    return inRange(seed, 0, 1000);
  }

  function booleanValue(fieldName, node, seed) {
    if (node.typename === 'PageInfo' && node.pagination) return pageInfoValue(fieldName, node.pagination);
    if (fieldName === 'isAdult') return false;
    if (fieldName === 'deleted') return true; // the `Deleted` payload of delete mutations
    return seed % 2 === 0;
  }

  function stringValue(fieldName, node, seed, index) {
    if (/(Title|Name)$/.test(node.typename)) {
      return fieldName === 'native' ? `シミュレーション ${node.id}` : node.label;
    }
    if (fieldName === 'name') return node.entityType === node.typename ? node.label : spaced(node.typename);
    if (/genre/i.test(fieldName)) return GENRES[(hash(node.seed, fieldName) + (index ?? 0)) % GENRES.length];
    if (fieldName === 'synonyms') return `${node.label} (alt. ${(index ?? 0) + 1})`;
    if (fieldName === 'siteUrl') return `https://anilist.co/${sitePath(node)}/${node.id}`;
    if (fieldName === 'color') return `#${(seed & 0xffffff).toString(16).padStart(6, '0')}`;
    if (/Image|Avatar/.test(node.typename) || /image|banner|avatar/i.test(fieldName)) {
      return `${IMAGE_HOST}/${sitePath(node)}/${node.id}/${fieldName}.jpg`;
    }
    if (/url$/i.test(fieldName)) return `https://anilist-sim.invalid/${sitePath(node)}/${node.id}/${fieldName}`;
    if (/description|about|summary|body|text|notes|comment|message/i.test(fieldName)) {
      return `Simulated ${fieldName} of ${node.label}.`;
    }
    return `${node.label} ${fieldName}`;
  }

  return { resolveField, queryRoot: rootNode('Query'), mutationRoot: rootNode('Mutation') };
}

function pageInfoValue(fieldName, { page, perPage, total }) {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  switch (fieldName) {
    case 'total':
      return total;
    case 'perPage':
      return perPage;
    case 'currentPage':
      return page;
    case 'lastPage':
      return lastPage;
    case 'hasNextPage':
      return page < lastPage;
    default:
      return null;
  }
}

function itemsOnPage({ page, perPage, total }) {
  return Math.max(0, Math.min(perPage, total - (page - 1) * perPage));
}

/** The arguments of the field that produced a node, kept with their types for echoing. */
function echoOf(field, args) {
  const echo = new Map();
  for (const arg of field.args) {
    const value = args[arg.name];
    if (value !== undefined && value !== null) echo.set(arg.name, { value, type: arg.type });
  }
  return echo;
}

/** An argument can stand in for a field when both are the same named type, list or not. */
function sameShape(argType, fieldType) {
  return (
    getNamedType(argType) === getNamedType(fieldType) &&
    isListType(getNullableType(argType)) === isListType(getNullableType(fieldType))
  );
}

/** An input object argument stands in for a non-list object field of the same field names. */
function echoesInto(argType, fieldType) {
  const input = getNamedType(argType);
  const output = getNamedType(fieldType);
  if (!isInputObjectType(input) || !isObjectType(output) || isListType(getNullableType(fieldType))) return false;
  const outputFields = output.getFields();
  return Object.keys(input.getFields()).every((name) => name in outputFields);
}

function mediaKind(args, seed) {
  if (args.type === 'ANIME' || args.type === 'MANGA') return args.type;
  return seed % 4 === 0 ? 'MANGA' : 'ANIME';
}

function entityLabel(typename, id, kind) {
  if (typename === 'Media') return `Simulated ${kind === 'MANGA' ? 'Manga' : 'Anime'} #${id}`;
  if (typename === 'User') return `SimUser${id}`;
  return `Simulated ${spaced(typename)} #${id}`;
}

/** `MediaListGroup` -> `Media List Group` */
function spaced(typename) {
  return typename.replace(/(?<=[a-z])(?=[A-Z])/g, ' ');
}

/**
 * The members of a union or interface the document asks about (`... on AiringNotification`),
 * so a selection of fragments gets members it selects fields of; all members when none.
 */
function selectedMemberTypes(abstractType, info) {
  const wanted = new Set();
  const collect = (selectionSet) => {
    for (const selection of selectionSet?.selections ?? []) {
      const fragment = selection.kind === 'FragmentSpread' ? info.fragments[selection.name.value] : selection;
      if (fragment.kind === 'Field') continue;
      const condition = fragment.typeCondition?.name.value;
      if (condition === undefined || condition === abstractType.name) collect(fragment.selectionSet);
      else wanted.add(condition);
    }
  };
  for (const fieldNode of info.fieldNodes) collect(fieldNode.selectionSet);
  const members = info.schema.getPossibleTypes(abstractType);
  const selected = members.filter((member) => wanted.has(member.name));
  return selected.length > 0 ? selected : members;
}

function sitePath(node) {
  return node.entityType === 'Media' ? node.kind.toLowerCase() : node.entityType.toLowerCase();
}

/** FNV-1a over the parts: cheap, stable across runs and platforms. */
function hash(...parts) {
  let h = 0x811c9dc5;
  for (const char of parts.join('\u0000')) {
    h ^= char.codePointAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function pick(values, seed) {
  return values[seed % values.length];
}

function inRange(seed, min, max) {
  return min + (seed % (max - min + 1));
}

function stableJson(value) {
  return JSON.stringify(value, (_key, inner) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b)))
      : inner,
  );
}
