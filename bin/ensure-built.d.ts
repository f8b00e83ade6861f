/** The package root (the folder holding package.json). */
export declare const root: string
/** Makes sure `entry` (a path under dist/) is built from the current sources; returns it. */
export declare const ensureBuilt: (entry: string) => string
/** Bundles the compiled CLI when its bundle is older (esbuild at hand); returns the file to run. */
export declare const ensureBundled: (entry: string, bundle: string) => Promise<string>
