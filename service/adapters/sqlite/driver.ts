// Which better-sqlite3 opens the database. better-sqlite3 12 (node::ObjectWrap) aborts the process on
// Node 24.19+ when a statement is garbage-collected outside a V8 context ("Assertion failed: (env) !=
// nullptr" in RemoveEnvironmentCleanupHook); 13 (Node-API) fixes that but needs Node 22 and crashes on 20.
// Both are installed (13 as the `better-sqlite3-napi` alias, with prebuilt binaries) and the running Node
// picks: drop 12 and the alias when Node 20 is no longer supported.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/** The first Node major on which better-sqlite3 13 runs. */
export const NAPI_DRIVER_FROM_NODE = 22;

/** The npm package name of the driver the running Node uses. */
export function driverPackage(nodeVersion = process.versions.node): string {
  return Number(nodeVersion.split('.')[0]) >= NAPI_DRIVER_FROM_NODE ? 'better-sqlite3-napi' : 'better-sqlite3';
}

const require = createRequire(import.meta.url);

/** The Database class of the driver the running Node uses (both share one API). */
export const Database = require(driverPackage()) as typeof BetterSqlite3;
