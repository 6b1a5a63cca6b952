/**
 * Provider token formats, as data. Each rule is a literal prefix (found by the
 * redactor's one anchor pass, so the hot path stays a single scan) and the
 * body that must follow it, with bounded quantifiers only. The shapes follow
 * gitleaks' maintained rule set (github.com/gitleaks/gitleaks,
 * config/gitleaks.toml, MIT): a rule there with a fixed prefix is a rule here.
 * To add a provider, add a row; `test/unit/redactCoverage.test.ts` builds a
 * token of every row and checks it is hidden in a message, a JSON-escaped
 * tool input, a tool output and a line-numbered file read.
 *
 * Formats handled by hand in redact.ts (because their prefix is shared or
 * their shape needs more than a prefix and a body): PEM private keys, GitHub,
 * OpenAI/Anthropic `sk-`, Stripe, Slack, Google `AIza`, AWS key ids, JWTs,
 * GitLab `glpat-`, npm, Hugging Face, SendGrid, Slack webhooks.
 */
import type { RedactionKind } from './redact';

export interface VendorTokenRule {
  /** gitleaks' rule id, where there is one. */
  readonly id: string;
  readonly kind: RedactionKind;
  readonly prefixes: readonly string[];
  /** The body after the prefix (a regular expression source, bounded). */
  readonly body: string;
  /** What may not stand right before the prefix: a token character (default), an alphanumeric, or nothing is checked. */
  readonly boundary?: 'token' | 'alnum' | 'none';
  /** False when the body may be followed by more token characters (a variable-length body). Default true. */
  readonly exact?: boolean;
}

export const VENDOR_TOKEN_RULES: readonly VendorTokenRule[] = [
  { id: 'age-secret-key', kind: 'private-key', prefixes: ['AGE-SECRET-KEY-1'], body: '[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}' },
  { id: 'pypi-upload-token', kind: 'token', prefixes: ['pypi-AgEIcHlwaS5vcmc'], body: '[\\w-]{50,1000}', exact: false },
  { id: 'shopify-access-token', kind: 'token', prefixes: ['shpat_', 'shpca_', 'shppa_', 'shpss_'], body: '[a-fA-F0-9]{32}' },
  { id: 'digitalocean-token', kind: 'token', prefixes: ['dop_v1_', 'doo_v1_', 'dor_v1_'], body: '[a-f0-9]{64}' },
  { id: 'databricks-api-token', kind: 'token', prefixes: ['dapi'], body: '[a-f0-9]{32}(?:-\\d)?' },
  { id: 'doppler-api-token', kind: 'token', prefixes: ['dp.pt.'], body: '[a-zA-Z0-9]{43}' },
  { id: 'linear-api-key', kind: 'api-key', prefixes: ['lin_api_'], body: '[a-zA-Z0-9]{40}' },
  { id: 'postman-api-token', kind: 'api-key', prefixes: ['PMAK-'], body: '[a-fA-F0-9]{24}-[a-fA-F0-9]{34}' },
  { id: 'groq-api-key', kind: 'api-key', prefixes: ['gsk_'], body: '[a-zA-Z0-9]{52}' },
  { id: 'replicate-api-token', kind: 'token', prefixes: ['r8_'], body: '[a-zA-Z0-9]{37}' },
  { id: 'vault-service-token', kind: 'token', prefixes: ['hvs.'], body: '[\\w-]{90,120}' },
  { id: 'vault-batch-token', kind: 'token', prefixes: ['hvb.'], body: '[\\w-]{138,300}' },
  { id: 'sentry-org-token', kind: 'token', prefixes: ['sntrys_eyJ'], body: '[a-zA-Z0-9+/=_-]{50,400}', exact: false },
  { id: 'sentry-user-token', kind: 'token', prefixes: ['sntryu_'], body: '[a-f0-9]{64}' },
  { id: 'figma-token', kind: 'token', prefixes: ['figd_'], body: '[\\w-]{40}' },
  { id: 'grafana-cloud-api-token', kind: 'token', prefixes: ['glc_'], body: '[A-Za-z0-9+/]{32,400}={0,2}', exact: false },
  { id: 'grafana-service-account-token', kind: 'token', prefixes: ['glsa_'], body: '[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}' },
  { id: 'new-relic-user-api-key', kind: 'api-key', prefixes: ['NRAK-'], body: '[A-Z0-9]{27}' },
  { id: 'square-access-token', kind: 'token', prefixes: ['sq0atp-'], body: '[\\w-]{22}' },
  { id: 'square-secret', kind: 'api-key', prefixes: ['sq0csp-'], body: '[\\w-]{43}' },
  { id: 'notion-api-token', kind: 'token', prefixes: ['ntn_'], body: '[0-9]{11}[A-Za-z0-9]{35}' },
  { id: 'supabase-access-token', kind: 'token', prefixes: ['sbp_'], body: '[a-f0-9]{40}' },
  { id: 'twilio-api-key', kind: 'api-key', prefixes: ['SK'], body: '[0-9a-fA-F]{32}', boundary: 'alnum' },
  { id: 'mailgun-private-api-token', kind: 'api-key', prefixes: ['key-'], body: '[a-f0-9]{32}' },
  { id: 'discord-webhook', kind: 'token', prefixes: ['discord.com/api/webhooks/', 'discordapp.com/api/webhooks/'], body: '\\d{17,20}/[\\w-]{60,70}', boundary: 'none' },
  { id: 'atlassian-api-token', kind: 'token', prefixes: ['ATATT3'], body: '[A-Za-z0-9_=-]{186}' },
  { id: 'heroku-api-key-v2', kind: 'api-key', prefixes: ['HRKU-AA'], body: '[0-9a-zA-Z_-]{58}' },
  { id: 'flyio-access-token', kind: 'token', prefixes: ['fo1_'], body: '[\\w-]{43}' },
  { id: 'huggingface-organization-api-token', kind: 'api-key', prefixes: ['api_org_'], body: '[a-zA-Z]{34}' },
  { id: 'gitlab-runner-authentication-token', kind: 'token', prefixes: ['glrt-'], body: '[\\w-]{20}' },
  { id: 'gitlab-deploy-token', kind: 'token', prefixes: ['gldt-'], body: '[\\w-]{20}' },
  { id: 'gitlab-ptt', kind: 'token', prefixes: ['glptt-'], body: '[0-9a-f]{40}' },
  { id: 'gitlab-rrt', kind: 'token', prefixes: ['GR1348941'], body: '[\\w-]{20}' },
  { id: 'jfrog-api-key', kind: 'api-key', prefixes: ['AKCp'], body: '[A-Za-z0-9]{69}', boundary: 'alnum' },
  { id: 'dynatrace-api-token', kind: 'token', prefixes: ['dt0c01.'], body: '[A-Z0-9]{24}\\.[A-Z0-9]{64}' },
  { id: 'pulumi-api-token', kind: 'token', prefixes: ['pul-'], body: '[a-f0-9]{40}' },
  { id: 'planetscale-api-token', kind: 'token', prefixes: ['pscale_tkn_', 'pscale_pw_', 'pscale_oauth_'], body: '[\\w=.-]{32,64}', exact: false },
  { id: 'prefect-api-token', kind: 'token', prefixes: ['pnu_'], body: '[a-zA-Z0-9]{36}' },
  { id: 'readme-api-token', kind: 'token', prefixes: ['rdme_'], body: '[a-z0-9]{70}' },
  { id: 'rubygems-api-token', kind: 'token', prefixes: ['rubygems_'], body: '[a-f0-9]{48}' },
  { id: 'sendinblue-api-token', kind: 'api-key', prefixes: ['xkeysib-'], body: '[a-f0-9]{64}-[a-zA-Z0-9]{16}' },
  { id: 'shippo-api-token', kind: 'token', prefixes: ['shippo_live_', 'shippo_test_'], body: '[a-f0-9]{40}' },
  { id: 'typeform-api-token', kind: 'token', prefixes: ['tfp_'], body: '[\\w.=-]{59}', exact: false },
  { id: 'easypost-api-token', kind: 'token', prefixes: ['EZAK'], body: '[a-zA-Z0-9]{54}', boundary: 'alnum' },
  { id: 'frameio-api-token', kind: 'token', prefixes: ['fio-u-'], body: '[\\w=-]{64}' },
  { id: 'mapbox-secret-token', kind: 'token', prefixes: ['sk.eyJ'], body: '[\\w-]{20,400}\\.[\\w-]{20,100}', exact: false },
  { id: 'cloudflare-origin-ca-key', kind: 'api-key', prefixes: ['v1.0-'], body: '[a-f0-9]{24}-[a-f0-9]{146}' },
  { id: 'alibaba-access-key-id', kind: 'api-key', prefixes: ['LTAI'], body: '[a-zA-Z0-9]{20}', boundary: 'alnum' },
  { id: 'openai-api-key-legacy', kind: 'api-key', prefixes: ['sess-'], body: '[a-zA-Z0-9]{40}' },
  { id: 'telegram-bot-api-token', kind: 'token', prefixes: ['api.telegram.org/bot'], body: '\\d{5,16}:A[\\w-]{34}', boundary: 'none' },
];
