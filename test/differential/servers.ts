/**
 * The servers of the differential matrix, each as mcp.json spells it (the daemon's row) and as
 * a host spawns it direct (the same command), with what its session cannot make from schemas:
 * fixed arguments where generated ones would wait long, reach the network, or leave state a
 * shared server keeps for the next session; and a call order for a stateful server whose
 * session must leave it as it found it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fixture } from "../helpers/processes.js";
import type { ServerScript } from "./session.js";

const require = createRequire(import.meta.url);
const referenceBin = (name: string): string =>
  join(dirname(require.resolve(`${name}/package.json`)), "dist", "index.js");

export interface MatrixServer {
  id: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  script: ServerScript;
  /**
   * The server keeps state on disk that its direct children and the pool's share (a folder,
   * a graph file): its direct sessions run one after another with the pooled ones, not beside
   * them.
   */
  sharedDisk?: true;
}

/** A server run by this Node with `args`, with no script of its own: a test's one server. */
export function nodeServer(id: string, args: string[], env?: Record<string, string>): MatrixServer {
  return { id, command: process.execPath, args, ...(env === undefined ? {} : { env }), script: {} };
}

/** A folder with a file in it, for server-filesystem (its row's directory). */
export function filesystemFolder(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "a.txt"), "hello\nworld\n");
  return dir;
}

/** server-filesystem's tools on `dir`: its own file, idempotent writes, a move that fails. */
function filesystemScript(dir: string): ServerScript {
  const a = join(dir, "a.txt");
  return {
    rootsTaken: { name: "list_allowed_directories", arguments: {} },
    fixed: {
      read_file: { path: a },
      read_text_file: { path: a, head: 1 },
      read_media_file: { path: a },
      read_multiple_files: { paths: [a] },
      write_file: { path: join(dir, "written.txt"), content: "written" },
      edit_file: { path: a, edits: [{ oldText: "hello", newText: "hi" }], dryRun: true },
      create_directory: { path: join(dir, "made") },
      list_directory: { path: dir },
      list_directory_with_sizes: { path: dir, sortBy: "name" },
      directory_tree: { path: dir, excludePatterns: ["made", "written.txt"] },
      move_file: { source: join(dir, "absent.txt"), destination: join(dir, "moved.txt") },
      search_files: { path: dir, pattern: "a.txt", excludePatterns: [] },
      get_file_info: { path: a },
    },
  };
}

/**
 * server-memory's script: everything made is deleted again, so a session through the pool's
 * shared server finds the graph a fresh one direct finds (empty).
 */
const MEMORY: ServerScript = {
  order: [
    "create_entities",
    "create_relations",
    "add_observations",
    "read_graph",
    "search_nodes",
    "open_nodes",
    "delete_observations",
    "delete_relations",
    "delete_entities",
  ],
  fixed: {
    create_entities: { entities: [{ name: "ada", entityType: "person", observations: ["codes"] }] },
    create_relations: { relations: [{ from: "ada", to: "ada", relationType: "knows" }] },
    add_observations: { observations: [{ entityName: "ada", contents: ["writes"] }] },
    search_nodes: { query: "ada" },
    open_nodes: { names: ["ada"] },
    delete_observations: { deletions: [{ entityName: "ada", observations: ["writes"] }] },
    delete_relations: { relations: [{ from: "ada", to: "ada", relationType: "knows" }] },
    delete_entities: { entityNames: ["ada"] },
  },
};

/**
 * server-everything's: the toggles are called twice (on, then off again: the pool's server is
 * shared, a direct one is not), the long operation kept short, the gzip tool given a data URI
 * (its default fetches from the network), the research task not ambiguous (it would ask
 * through `tasks/result`, a flow the session does not script).
 */
const EVERYTHING: ServerScript = {
  rootsTaken: { name: "get-roots-list", arguments: {} },
  twice: ["toggle-simulated-logging", "toggle-subscriber-updates"],
  fixed: {
    "trigger-long-running-operation": { duration: 0.2, steps: 2 },
    "simulate-research-query": { topic: "pools", ambiguous: false },
    "gzip-file-as-resource": {
      name: "hello.gz",
      data: "data:text/plain;base64,aGVsbG8=",
      outputType: "resource",
    },
  },
};

/**
 * The modern fixture's (test/fixtures/modern-server.mjs): `confirm` without `waitFor` (it
 * would wait for an event no one makes), `slow` short, `grow` not called (it registers a tool
 * on the server, which every later session of the shared server would list).
 */
const MODERN: ServerScript = {
  fixed: { confirm: { question: "proceed?" }, slow: { ms: 5 } },
  uncalled: { grow: "registers a tool that a shared server keeps for every later session" },
};

/** The matrix's servers; `dir` is the test's own folder (server-filesystem's and memory's). */
export function matrixServers(dir: string): MatrixServer[] {
  const node = process.execPath;
  const folder = filesystemFolder(join(dir, "files"));
  return [
    {
      id: "everything",
      command: node,
      args: [referenceBin("@modelcontextprotocol/server-everything")],
      script: EVERYTHING,
    },
    {
      id: "filesystem",
      command: node,
      args: [referenceBin("@modelcontextprotocol/server-filesystem"), folder],
      script: filesystemScript(folder),
      sharedDisk: true,
    },
    {
      id: "memory",
      command: node,
      args: [referenceBin("@modelcontextprotocol/server-memory")],
      env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
      script: MEMORY,
      sharedDisk: true,
    },
    { id: "conformance", command: node, args: [fixture("conformance-server.mjs")], script: {} },
    { id: "dual", command: node, args: [fixture("dual-stdio.mjs")], script: MODERN },
    { id: "modern", command: node, args: [fixture("modern-stdio.mjs")], script: MODERN },
    { id: "legacy", command: node, args: [fixture("strict-legacy.mjs")], script: {} },
  ];
}
