#!/usr/bin/env node
/**
 * `node scripts/build-id.mjs`, the last step of `npm run build`: digests the JavaScript the
 * build just wrote (dist/ and the protocol workspace's dist/) and writes the digest to
 * dist/build-id.json, which every mcpool process reads as its build's identity instead of
 * digesting the output itself (src/build-id.ts).
 */
import { writeFileSync } from "node:fs";
import { URL } from "node:url";
import { BUILD_ID_FILE, digestBuild } from "../dist/build-id.js";

const file = new URL(`../dist/${BUILD_ID_FILE}`, import.meta.url);
writeFileSync(file, `${JSON.stringify({ id: digestBuild() })}\n`);
