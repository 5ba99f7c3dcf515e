// The documentation holds together (issue 38): the README stays a front page, every page of
// docs/ is reachable from it, and every relative link of the README, docs/ and the benchmark's
// results names a file that exists and, with a #fragment, a heading of that file as GitHub
// renders its anchor.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..');
const docsPages = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const checked = ['README.md', 'bench/RESULTS.md', ...docsPages];

/** The lines of a Markdown file outside fenced code blocks, with inline code spans blanked. */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) lines.push(line.replace(/`[^`]*`/g, '``'));
  }
  return lines;
}

/** GitHub's anchor for a heading: its text without formatting, lower case, punctuation dropped. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a file's headings get, duplicates numbered as GitHub numbers them. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n += 1) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The relative link targets of a file: `[text](target)`, not URLs with a scheme. */
function relativeLinks(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return proseLines(text).flatMap((line) =>
    [...line.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]).filter((target) => !/^[a-z]+:/i.test(target)),
  );
}

describe('the documentation', () => {
  it('keeps the README a front page of at most 400 lines', () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(400);
  });

  it('finds the headings and links it checks', () => {
    expect(docsPages.length).toBeGreaterThan(15);
    expect(anchorsOf('docs/pools.md')).toContain('http11-on-the-wire');
    expect(anchorsOf('docs/hooks-and-diagnostics.md')).toContain('observability-diagnostics_channel-and-opentelemetry');
    expect(relativeLinks('README.md')).toContain('docs/constructing.md');
  });

  it.each(checked)('%s: every relative link names an existing file and heading', (file) => {
    const broken: string[] = [];
    for (const target of relativeLinks(file)) {
      const [path, fragment] = target.split('#');
      const destination = path === '' ? file : relative(root, resolve(dirname(join(root, file)), path));
      if (!existsSync(join(root, destination))) {
        broken.push(`${target}: no file ${destination}`);
      } else if (fragment !== undefined && destination.endsWith('.md') && !anchorsOf(destination).has(fragment)) {
        broken.push(`${target}: no heading #${fragment} in ${destination}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('links every page of docs/ from the README', () => {
    const linked = new Set(relativeLinks('README.md').map((target) => target.split('#')[0]));
    expect(docsPages.filter((page) => !linked.has(page))).toEqual([]);
  });
});
