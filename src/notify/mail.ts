/** Sending e-mail through SMTP (SMTP_URL) with nodemailer; one interface, so tests and the outbox fit. */
import type { Transporter } from 'nodemailer';

export interface Mail {
  from: string;
  to: { email: string; name: string }[];
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/** nodemailer is loaded and the transport made when the first mail is sent. */
export function smtpMailer(url: string): Mailer {
  let transport: Promise<Transporter> | null = null;
  let closed = false;
  const open = async (): Promise<Transporter> => {
    const { default: nodemailer } = await import('nodemailer');
    const made = nodemailer.createTransport(url);
    if (closed) made.close();
    return made;
  };
  return {
    async send(mail) {
      transport ??= open();
      await (
        await transport
      ).sendMail({
        from: mail.from,
        to: mail.to.map((r) => (r.name ? { name: r.name, address: r.email } : r.email)),
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      });
    },
    close: () => {
      closed = true;
      void transport?.then(
        (made) => made.close(),
        () => {},
      );
    },
  };
}
