// The package's entry point in Node (the "node" condition of package.json's exports): the same API
// as the browser build, except that `init()` with no argument reads the .wasm from beside this
// file (Node's fetch cannot load a file: URL). `init({ module_or_path: bytes })` works as well.
import { readFile } from 'node:fs/promises';
import initWeb, { initSync } from './bridge_console_client.js';

export * from './bridge_console_client.js';
export { initSync };

/** Loads the WebAssembly module; call it (and await it) once before anything else. */
export default async function init(options) {
  if (options === undefined || options === null) {
    const bytes = await readFile(new URL('./bridge_console_client_bg.wasm', import.meta.url));
    return initWeb({ module_or_path: bytes });
  }
  return initWeb(options);
}
