/** mcpool: the in-process pool, the row helpers, and the package version. */
export * from "./pool/index.js";
export * from "./config/index.js";
export { VERSION } from "./version.js";
