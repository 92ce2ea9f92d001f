/**
 * client/ may not import src/, so it declares its own copies of the pool's data shapes.
 * This file makes the two copies one contract: `npm test` typechecks it, and it fails
 * when either side gains, loses or changes a field the other does not have.
 */
import type * as Wire from "mcpool-client";
import type * as Pool from "../../src/index.js";

type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;

export type WireShapesMatch = [
  Assert<Equal<Wire.ServerState, Pool.ServerState>>,
  Assert<Equal<Wire.PoolEvent, Pool.PoolEvent>>,
  Assert<Equal<Wire.ToolDefinition, Pool.ToolDefinition>>,
  Assert<Equal<Wire.ProbeResult, Pool.ProbeResult>>,
  Assert<Equal<Wire.ServerNotification, Pool.ServerNotification>>,
  Assert<Equal<Wire.PinInfo, Pool.PinInfo>>,
  Assert<Equal<Wire.ToolDescription, Pool.ToolDescription>>,
];
