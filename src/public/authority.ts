/**
 * `agentlanes/authority`: who may control a session (the `authority` option): the built-in roles, the control
 * actions, and the `Controller` that `abort`, `approve` and `supplyToolResult` take as `by`.
 */
export { builtInRoles, controlActions, type BuiltInRole, type ControlAction } from '../core/index.js';
export type { AuthorityOptions, Controller } from '../runtime/index.js';
