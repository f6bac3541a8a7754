import type { Project } from '#sdk';
import { h } from './dom.ts';
import { CONSOLE, type PageContext } from './page.ts';

// The checklist a new project starts from: credentials → template → first message → webhook,
// each ticked from what the API says (nothing stored in the browser), gone once all are done.

interface Step {
  id: string;
  label: string;
  done: boolean;
  href: string;
  todo: string;
}

/** The checklist, or nothing when every step is done (or the API cannot say). */
export async function onboarding(ctx: PageContext): Promise<HTMLElement | null> {
  try {
    const [project, templates, messages, endpoints] = await Promise.all([
      ctx.api.get<Project>('/v1/projects/me'),
      ctx.api.get<{ status: string }[]>('/v1/templates', { limit: 200 }),
      ctx.api.get<unknown[]>('/v1/messages', { limit: 1 }),
      ctx.api.get<unknown[]>('/v1/webhook-endpoints', { limit: 1 }),
    ]);
    const steps: Step[] = [
      { id: 'credentials', label: 'Save the provider credentials', done: Boolean(project.providerPhoneNumberId), href: `${CONSOLE}/provider`, todo: 'Go to Provider' },
      {
        id: 'template',
        label: 'Register a template and get it approved',
        done: templates.some((template) => template.status === 'APPROVED'),
        href: `${CONSOLE}/templates`,
        todo: 'Go to Templates',
      },
      { id: 'message', label: 'Send a first message', done: messages.length > 0, href: `${CONSOLE}/messages`, todo: 'Use “Send a message” below' },
      {
        id: 'webhook',
        label: 'Receive status events: a webhook endpoint or a callback URL',
        done: endpoints.length > 0 || Boolean(project.callbackUrl),
        href: `${CONSOLE}/webhooks`,
        todo: 'Go to Webhooks',
      },
    ];
    const left = steps.filter((step) => !step.done).length;
    if (left === 0) return null;
    return h(
      'section',
      { class: 'card onboarding', 'aria-labelledby': 'onboarding-heading' },
      h('h2', { id: 'onboarding-heading' }, 'Get started'),
      h('p', { class: 'muted' }, `${steps.length - left} of ${steps.length} done.`),
      h(
        'ol',
        { class: 'checklist' },
        steps.map((step) =>
          h(
            'li',
            { 'data-step': step.id, 'data-done': String(step.done) },
            h('span', { class: 'tick', 'aria-hidden': 'true' }, step.done ? '✓' : ''),
            h('span', null, step.label, h('span', { class: 'visually-hidden' }, step.done ? ' (done)' : ' (to do)')),
            step.done || step.id === 'message' ? null : h('a', { href: step.href }, step.todo),
          ),
        ),
      ),
    );
  } catch {
    return null;
  }
}
