/**
 * The order test files start in: the longest first, so that the workers end together.
 * vitest does this itself from its cache of the last run, but a fresh checkout (`npm ci`, as
 * CI runs) has no cache and vitest then starts the largest files first: the differential
 * matrix, a small file that runs for two minutes, started last and ran alone at the end.
 * What each file took in a whole run is kept in bench/figures/suite-files.json
 * (`node bench/suite-files.mjs` after a run renews it); vitest's own record wins when it
 * has one. Files never timed start first, as vitest starts them.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const RECORDED = new URL("../bench/figures/suite-files.json", import.meta.url);

/** Milliseconds each file took in the recorded run, by `project:path`. */
function recorded(): Record<string, number> {
  return (JSON.parse(readFileSync(RECORDED, "utf8")) as { files: Record<string, number> }).files;
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // vitest's order between projects (and its isolated files first) stands; only the
    // order within each run of one project's files changes.
    const sorted = await super.sort(files);
    const took = recorded();
    const root = this.ctx.config.root;
    let block = 0;
    const keyed = sorted.map((spec, index) => {
      if (index > 0 && sorted[index - 1]!.project.name !== spec.project.name) block++;
      const key = `${spec.project.name}:${relative(root, spec.moduleId)}`;
      const ms = this.ctx.cache.getFileTestResults(key)?.duration ?? took[key];
      return { spec, index, block, ms };
    });
    keyed.sort(
      (a, b) =>
        a.block - b.block ||
        (a.ms === undefined || b.ms === undefined
          ? Number(a.ms !== undefined) - Number(b.ms !== undefined)
          : b.ms - a.ms) ||
        a.index - b.index,
    );
    return keyed.map(({ spec }) => spec);
  }
}
