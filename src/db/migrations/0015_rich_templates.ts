import type { Kysely } from 'kysely';

// Issue 21's registration and sending half: rich templates (CONTRACT §9).
//
// - templates.parameter_format: NAMED for templates with named parameters; null is POSITIONAL
//   (every template registered before). Lives as long as its template.
// - messages.rich_parameters: JSON of what a rich template's message sends beside its variables
//   (named parameters, a media or location header, button values), resolved against the template
//   when the message was accepted; null for the spec's templates. Lives as long as its message.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('templates').addColumn('parameter_format', 'text').execute();
  await db.schema.alterTable('messages').addColumn('rich_parameters', 'text').execute();
}

