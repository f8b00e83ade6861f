/** The package root (the folder holding package.json). */
export declare const root: string
/** Makes sure `entry` (a path under dist/) is built from the current sources; returns it. */
export declare const ensureBuilt: (entry: string) => string
