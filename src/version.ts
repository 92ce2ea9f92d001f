/**
 * This package's version: the default clientInfo.version and the daemon's own. Kept equal to
 * package.json by a test.
 */
export const VERSION = "0.1.0";
