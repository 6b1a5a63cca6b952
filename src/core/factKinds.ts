/**
 * The kinds of a protected fact, declared once: its types, its statuses and who
 * wrote it. Data only (it imports nothing), so that the panel's protocol can
 * check a fact's fields against the same lists the core keeps them in.
 */

export const FACT_TYPES = ['goal', 'constraint', 'permission', 'decision', 'open_issue', 'completed_effect', 'preference', 'evidence_ref'] as const;
export const FACT_STATUSES = ['active', 'superseded', 'pending', 'deleted'] as const;
export const WRITERS = ['user', 'model', 'tool', 'policy'] as const;
