/**
 * A package registry on 127.0.0.1 for the packaging test, so that `npm install` of a packed
 * tarball resolves its dependencies the way it would from registry.npmjs.org, with no
 * network. It serves exactly the versions `package-lock.json` pins, and their tarballs
 * from the npm cache by integrity.
 *
 * Why not `npm install --offline`: after `npm ci` on a clean machine the cache holds every
 * locked tarball (addressed by its integrity) but no metadata `npm install` can use to
 * resolve a version range, so an offline install of a new tarball fails with ENOTCACHED.
 * Answering the metadata requests here from the lockfile closes that gap and keeps the
 * install to the tested dependency tree.
 *
 * It also serves tarballs packed from this checkout as if they had been published beside
 * it (`published`): mcpool-client depends on mcpool-protocol as any npm package depends on
 * another, so an agent's `npm install` of the client tarball fetches the protocol from here.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** One `packages` entry of a version 3 lockfile, the fields a packument version needs. */
interface LockEntry {
  name?: string;
  version?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, unknown>;
  engines?: Record<string, string>;
  bin?: Record<string, string>;
  os?: string[];
  cpu?: string[];
}

/** A tarball packed from this checkout, served as a published version of its package. */
export interface PublishedTarball {
  path: string;
  manifest: { name: string; version: string; dependencies?: Record<string, string> };
}

export interface LocalRegistry {
  /** `http://127.0.0.1:PORT/`, for `npm --registry`. */
  url: string;
  /** Every request answered 404: a package or tarball the lockfile and cache do not have. */
  misses: string[];
  close(): Promise<void>;
}

const NODE_MODULES = "node_modules/";
const TARBALL_PATH = "/-/tarball/";
const PUBLISHED_PATH = "/-/published/";

/** Starts the registry for `lockfilePath`, reading tarballs from `cacheDir` (`npm config get cache`). */
export async function startLocalRegistry(
  lockfilePath: string,
  cacheDir: string,
  published: readonly PublishedTarball[] = [],
): Promise<LocalRegistry> {
  const lock = JSON.parse(await readFile(lockfilePath, "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const entries = lockedVersions(lock.packages);
  const ours = new Map<string, PublishedTarball & { integrity: string }>();
  for (const tarball of published) {
    const digest = createHash("sha512").update(await readFile(tarball.path));
    ours.set(tarball.manifest.name, { ...tarball, integrity: `sha512-${digest.digest("base64")}` });
  }
  const misses: string[] = [];
  let base = "";
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    const miss = (): void => {
      misses.push(path);
      response.writeHead(404, { "content-type": "application/json" }).end("{}");
    };
    if (path.startsWith(TARBALL_PATH) || path.startsWith(PUBLISHED_PATH)) {
      const file = path.startsWith(TARBALL_PATH)
        ? cachedContent(cacheDir, path.slice(TARBALL_PATH.length))
        : ours.get(path.slice(PUBLISHED_PATH.length))?.path;
      if (file === undefined) return miss();
      const stream = createReadStream(file);
      stream.once("error", miss);
      stream.once("open", () => {
        response.writeHead(200, { "content-type": "application/octet-stream" });
        stream.pipe(response);
      });
      return;
    }
    const own = ours.get(path.slice(1));
    if (own !== undefined) {
      response
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify(publishedPackument(own, base)));
      return;
    }
    const versions = entries.get(path.slice(1));
    if (versions === undefined) return miss();
    response
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify(packument(path.slice(1), versions, base)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `${base}/`, misses, close: () => closeServer(server) };
}

/** Package name → its locked entries, one per version (a name may be locked at several). */
function lockedVersions(packages: Record<string, LockEntry>): Map<string, LockEntry[]> {
  const byName = new Map<string, LockEntry[]>();
  for (const [key, entry] of Object.entries(packages)) {
    const at = key.lastIndexOf(NODE_MODULES);
    if (at < 0 || entry.link || !entry.version || !entry.integrity) continue;
    const name = entry.name ?? key.slice(at + NODE_MODULES.length);
    const list = byName.get(name) ?? [];
    if (!list.some((other) => other.version === entry.version)) list.push(entry);
    byName.set(name, list);
  }
  return byName;
}

/** The registry document npm reads to pick a version; tarballs are named by integrity. */
function packument(name: string, entries: LockEntry[], base: string): unknown {
  const versions: Record<string, unknown> = {};
  for (const entry of entries) {
    const { version, integrity, dependencies, optionalDependencies, peerDependencies } = entry;
    const { peerDependenciesMeta, engines, bin, os, cpu } = entry;
    versions[version as string] = {
      name,
      version,
      ...{ dependencies, optionalDependencies, peerDependencies, peerDependenciesMeta },
      ...{ engines, bin, os, cpu },
      dist: { integrity, tarball: `${base}${TARBALL_PATH}${encodeURIComponent(integrity ?? "")}` },
    };
  }
  return { name, versions, "dist-tags": {} };
}

/** The registry document of a package packed from this checkout: its one version. */
function publishedPackument(
  tarball: PublishedTarball & { integrity: string },
  base: string,
): unknown {
  const { name, version, dependencies } = tarball.manifest;
  const dist = { integrity: tarball.integrity, tarball: `${base}${PUBLISHED_PATH}${name}` };
  return {
    name,
    versions: { [version]: { name, version, dependencies, dist } },
    "dist-tags": { latest: version },
  };
}

/** Where cacache keeps the content with this sha512 integrity, if it is one. */
function cachedContent(cacheDir: string, integrity: string): string | undefined {
  const match = /^sha512-([A-Za-z0-9+/=]+)$/.exec(integrity);
  if (!match) return undefined;
  const hex = Buffer.from(match[1] as string, "base64").toString("hex");
  return join(
    cacheDir,
    "_cacache",
    "content-v2",
    "sha512",
    hex.slice(0, 2),
    hex.slice(2, 4),
    hex.slice(4),
  );
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
