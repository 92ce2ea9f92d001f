/**
 * The README and every page under docs/ link to each other by relative paths and `#anchors`;
 * a link that points at a file or a heading that is not there is a dead end for a reader of a
 * clone. Anchors follow GitHub's rule for heading ids: lower-cased, punctuation other than `-`
 * and `_` dropped, spaces turned into `-`, a repeated id suffixed `-1`, `-2`, ….
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The markdown files a reader starts from: the front door, the docs, the packages' READMEs. */
function documents(): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(root, "docs", name));
  return [
    join(root, "README.md"),
    join(root, "client/README.md"),
    join(root, "protocol/README.md"),
    ...docs,
  ];
}

/** Markdown text without its fenced code blocks, where `#` starts no heading. */
function unfenced(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** Markdown text without code, where `[x](y)` is not a link. */
function prose(text: string): string {
  return unfenced(text).replace(/`[^`\n]*`/g, "");
}

export function headingIds(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of unfenced(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = (match[1] ?? "")
      .replace(/<[^>]+>/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

/** Every `[text](target)` link of a document whose target is not a URL with a scheme. */
function relativeLinks(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1] ?? "")
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe("the documentation's links", () => {
  it("computes heading ids as GitHub does", () => {
    const ids = headingIds(
      "# Getting started\n## How a host's capabilities reach a server\n## Step 1: `wire`\n## Step 1: `wire`\n```\n# not a heading\n```\n",
    );
    expect([...ids]).toEqual([
      "getting-started",
      "how-a-hosts-capabilities-reach-a-server",
      "step-1-wire",
      "step-1-wire-1",
    ]);
  });

  it("has a docs page for every page the README's map names, and the map names every page", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const named = new Set(
      relativeLinks(readme)
        .filter((target) => target.startsWith("docs/"))
        .map((target) => target.split("#")[0]),
    );
    const pages = readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md"));
    expect([...named].sort()).toEqual(pages.map((name) => `docs/${name}`).sort());
  });

  for (const file of documents()) {
    it(`resolves every relative link and anchor in ${relative(root, file)}`, () => {
      const text = readFileSync(file, "utf8");
      const dead: string[] = [];
      for (const link of relativeLinks(text)) {
        const [path = "", anchor] = link.split("#");
        const target = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
        if (!existsSync(target)) {
          dead.push(`${link}: no file ${relative(root, target)}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (statSync(target).isDirectory() || !target.endsWith(".md")) {
          dead.push(`${link}: an anchor into something that is not a markdown file`);
          continue;
        }
        if (!headingIds(readFileSync(target, "utf8")).has(decodeURIComponent(anchor))) {
          dead.push(`${link}: no heading #${anchor} in ${relative(root, target)}`);
        }
      }
      expect(dead).toEqual([]);
    });
  }
});
