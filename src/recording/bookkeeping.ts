// What in a run's database changes is an agent framework's own bookkeeping, not a tool's work: the
// tables a checkpointer saves its threads in. Their rows hold the whole conversation so far (every
// tool call's arguments among it), so they say nothing about which tool call a step carried out.

/**
 * LangGraph's Postgres checkpointer (`@langchain/langgraph-checkpoint-postgres` PostgresSaver,
 * in whichever schema it was given): its checkpoints, their channel blobs, the pending writes and
 * its migrations.
 */
const CHECKPOINTER_TABLES = new Set(['checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations']);

/** Whether a changed table is a framework's bookkeeping (a checkpointer's), never evidence of a tool call. */
export function isBookkeepingTable(table: string): boolean {
  return CHECKPOINTER_TABLES.has(table);
}
