/**
 * Reconcile as a pure function: from the rows the pool holds and the rows it is given,
 * what to add, restart, update in place and remove. Applying the plan is the
 * pool's business; deciding it touches no connection.
 */
import type { McpServerConfig } from "../../config/rows.js";
import { sameConnection } from "../../config/same-connection.js";

export interface ReconcilePlan {
  /** Rows with no entry yet. */
  add: McpServerConfig[];
  /** Rows whose connection fields changed: the old connection closes, a new one opens. */
  restart: McpServerConfig[];
  /** Rows whose other fields changed (or did not): applied without a restart. */
  update: McpServerConfig[];
  /** Ids that are no longer configured. */
  remove: string[];
  /** The ids of the next rows, in configuration order (duplicates after the first dropped). */
  order: string[];
}

export function planReconcile(
  previous: ReadonlyMap<string, McpServerConfig>,
  next: readonly McpServerConfig[],
): ReconcilePlan {
  const plan: ReconcilePlan = { add: [], restart: [], update: [], remove: [], order: [] };
  const seen = new Set<string>();
  for (const row of next) {
    // A duplicate id is a validation error; the first row keeps the id rather than
    // two entries fighting over one namespace.
    if (seen.has(row.id)) continue;
    seen.add(row.id);
    plan.order.push(row.id);
    const before = previous.get(row.id);
    if (!before) plan.add.push(row);
    else if (!sameConnection(before, row)) plan.restart.push(row);
    else plan.update.push(row);
  }
  for (const id of previous.keys()) if (!seen.has(id)) plan.remove.push(id);
  return plan;
}
