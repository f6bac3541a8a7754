import type { paths, webhooks } from './schema.ts';

// Names for the API's main shapes, taken from the generated types (sdk/src/schema.ts).

type Body<R> = R extends { content: { 'application/json': infer T } } ? T : never;
type ProblemBody<R> = R extends { content: { 'application/problem+json': infer T } } ? T : never;

export type Message = Body<paths['/v1/messages/{id}']['get']['responses'][200]>;
export type MessageStatus = Message['status'];
export type MessageEvent = Body<paths['/v1/messages/{id}/events']['get']['responses'][200]>[number];
export type SendMessageRequest = Body<NonNullable<paths['/v1/messages']['post']['requestBody']>>;
export type Template = Body<paths['/v1/templates/{id}']['get']['responses'][200]>;
export type TemplateStatus = Template['status'];
export type CreateTemplateRequest = Body<NonNullable<paths['/v1/templates']['post']['requestBody']>>;
export type Project = Body<paths['/v1/projects/me']['get']['responses'][200]>;
export type CreatedProject = Body<paths['/v1/projects']['post']['responses'][200]>;
export type ApiKey = Body<paths['/v1/api-keys']['get']['responses'][200]>[number];
export type CreatedApiKey = Body<paths['/v1/api-keys']['post']['responses'][200]>;
export type WebhookDelivery = Body<paths['/v1/webhook-deliveries/{id}']['get']['responses'][200]>;
export type Problem = ProblemBody<paths['/v1/projects/me']['get']['responses'][401]>;

/** The body of any webhook svc sends (a message, template or test event); `event` tells which. */
export type WebhookEvent = {
  [E in keyof webhooks]: webhooks[E] extends { post: { requestBody?: infer B } } ? Body<NonNullable<B>> : never;
}[keyof webhooks];

/** Paths whose GET is a paged list (it takes a `cursor`): what paginate() walks. */
export type PagedPath = {
  [P in keyof paths]: paths[P] extends { get: { parameters: { query?: { cursor?: string } } } }
    ? paths[P]['get'] extends { responses: { 200: { content: { 'application/json': unknown[] } } } }
      ? P
      : never
    : never;
}[keyof paths];

/** The query parameters of a paged list, without the cursor (paginate() follows it). */
export type PagedQuery<P extends PagedPath> = Omit<NonNullable<paths[P]['get']['parameters']['query']>, 'cursor'>;

/** One item of a paged list. */
export type PagedItem<P extends PagedPath> = Body<paths[P]['get']['responses'][200]> extends (infer T)[] ? T : never;
