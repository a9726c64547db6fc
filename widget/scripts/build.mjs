// Builds the loader into OUT_DIR (default dist/): rampart.js (minified IIFE, ES2019),
// rampart.js.sri (one line, sha384-<base64> of rampart.js) and rampart.d.ts (copied from
// types/). `make widget-build` writes widget/dist; `make widget-test` builds into a scratch
// directory and compares it with widget/dist (drift check).
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(process.argv[2] ?? join(here, "dist"));
mkdirSync(out, { recursive: true });

const result = await build({
  absWorkingDir: here,
  entryPoints: ["src/loader.ts"],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2019",
  minify: true,
  legalComments: "none",
  charset: "ascii",
  banner: { js: "/* Rampart widget loader v1. Built from widget/src by esbuild; do not edit. */" },
  write: false,
  logLevel: "warning",
});
const js = Buffer.from(result.outputFiles[0].contents);
writeFileSync(join(out, "rampart.js"), js);
const sri = "sha384-" + createHash("sha384").update(js).digest("base64");
writeFileSync(join(out, "rampart.js.sri"), sri + "\n");
copyFileSync(join(here, "types", "rampart.d.ts"), join(out, "rampart.d.ts"));
console.log(`-- built ${join(out, "rampart.js")} (${js.length} bytes, ${sri})`);
