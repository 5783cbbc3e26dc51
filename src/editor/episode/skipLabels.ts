// How each skip reason is shown (the skip picker, the message after a skip).
import type { SkipReason } from '../../store/records';

export const SKIP_LABELS: Record<SkipReason, string> = {
  too_hard: 'Too hard for me',
  unclear_task: 'The task is unclear',
  broken_environment: 'The environment is broken (the original would not run either)',
  not_a_real_drift: 'Not a realistic library drift',
  other: 'Other…',
};
