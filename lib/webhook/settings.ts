/** How `run` serves the admission webhook (its flags, resolved). */

export type WebhookCertificateSource =
  | { readonly kind: 'files'; readonly certFile: string; readonly keyFile: string }
  /** A kubernetes.io/tls Secret in the controller's namespace; with `generate`, filled by the controller when it does not exist. */
  | { readonly kind: 'secret'; readonly name: string; readonly generate: boolean }
  /** Made at start, in memory: one replica, or a caBundle each replica's own. */
  | { readonly kind: 'generated' };

export interface WebhookSettings {
  readonly port: number;
  readonly certificate: WebhookCertificateSource;
  /** The Service the API server calls the webhook through: what a generated certificate is for. */
  readonly service: { readonly namespace: string; readonly name: string };
  /** The ValidatingWebhookConfiguration whose caBundle follows the certificate's CA (not for cert-manager's, whose CA injector does it). */
  readonly configuration: string | undefined;
}
