/**
 * How a storage location string reads, for the `slotwise` commands, the composition root and
 * `createScheduling`'s options alike: a `postgres://` (`postgresql://`) URL is PostgreSQL,
 * anything else a SQLite file. It imports nothing, so the library's options load it cheaply.
 */

/** A PostgreSQL connection string, by its scheme (either spelling, any case). */
export const POSTGRES_URL = /^postgres(ql)?:\/\//i

/** A location: a `postgres://` or `postgresql://` URL selects PostgreSQL; anything else is a SQLite file. */
export const storageFromLocation = (location: string): { readonly postgres: string } | { readonly sqlite: string } =>
  POSTGRES_URL.test(location) ? { postgres: location } : { sqlite: location }
