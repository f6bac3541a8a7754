import type { ErrorClass } from '../provider.ts';

// WhatsApp's error codes that mean something to svc beyond the failure itself (the sandbox,
// which fails with WhatsApp's codes, classifies them the same way).
const CLASSES: Readonly<Record<string, ErrorClass>> = {
  // "Message undeliverable": not a WhatsApp user, or has blocked the business (also the sandbox's
  // +15550000001). Not 131050: that user still gets their one-time codes and order updates.
  '131026': 'recipient_unreachable',
  // "User has stopped marketing messages": Meta's marketing opt-out said another way (its
  // user_preferences webhook may come later, or not reach svc).
  '131050': 'marketing_stopped',
  // A held message dropped by the business portfolio's pacing, or a template paused for low
  // quality: many at once mean the portfolio is under review (cannot send or create templates).
  '132015': 'held_dropped',
};

export function whatsappErrorClass(code: string): ErrorClass | undefined {
  return Object.hasOwn(CLASSES, code) ? CLASSES[code] : undefined;
}
