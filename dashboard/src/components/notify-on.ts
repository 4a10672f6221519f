import { NOTIFY_ON } from '../../../src/domain/vocabulary';

export type NotifyOnValue = (typeof NOTIFY_ON)[number];

const LABELS: Record<NotifyOnValue, string> = {
  all: 'every run',
  failures: 'failures',
  threshold: 'after consecutive failures',
  switch: 'a switch between pass and fail',
};

/** The choices of `notify_on` (e-mail settings and integrations) with their labels. */
export const NOTIFY_ON_OPTIONS = NOTIFY_ON.map((value) => ({ value, label: LABELS[value] }));

export const notifyOnLabel = (value: NotifyOnValue): string => LABELS[value];
