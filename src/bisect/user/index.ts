// User predicates, like `git bisect run`: a JS/TS module, a SQL query, or a shell command.
export { functionPredicate, loadJsPredicate, type UserPredicateFn } from './js-predicate.js';
export { type ShellPredicateOptions, shellPredicate } from './shell-predicate.js';
export { type SqlPredicateOptions, sqlPredicate, verdictOfRows } from './sql-predicate.js';
export { BELIEF_DDL, openWorldDb, type QueryResult, type WorldDb } from './world-db.js';
