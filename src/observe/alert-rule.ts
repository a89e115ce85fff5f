// The shape of a Prometheus rules file, as sockbuf's alerting rules (alerts.ts, guard-alerts.ts) build it.

/** One Prometheus alerting rule of sockbuf's exporter. */
export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  /** severity, and for an alert that several rules share, what tells them apart */
  labels: { severity: 'warning' | 'info'; series?: string };
  /** runbook_url: the alert's section of docs/runbooks.md (RUNBOOKS), added by alertRules() */
  annotations: { summary: string; description: string; runbook_url?: string };
}

/** A group of Prometheus rules, as a rules file holds it. */
export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}
