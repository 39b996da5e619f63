// @leasehold/client: the TypeScript client of leasehold (docs/client.md).
export type * from "./api_types.js";
export type { WriteResult } from "./calls.js";
export { Checkout, type CheckoutOptions, type CheckoutSaveOptions } from "./checkout.js";
export { Client, type ClientOptions, type WithLockOptions, type WriteOptions } from "./client.js";
export {
  CancelledError,
  DeadlockError,
  LeaseholdError,
  LockedError,
  LockTimeoutError,
  LostError,
  NotFoundError,
  SessionLostError,
  StaleFenceError,
  UnreachableError,
  VersionMismatchError,
  type WaitForEdge,
} from "./errors.js";
export { Held, Lock, SemaphoreSlot } from "./handles.js";
export { type LockOptions, type SemaphoreOptions, Session, type SessionOptions } from "./session.js";
export type { TlsOptions } from "./tls.js";
export {
  type ClaimOptions,
  type CommitResult,
  type OperationState,
  Transaction,
} from "./transaction.js";
export { SseParser, type WatchEvent, type WatchEventData, type WatchOptions } from "./watch.js";
