/** Sending e-mail through SMTP (SMTP_URL) with nodemailer; one interface, so tests and the outbox fit. */
import nodemailer from 'nodemailer';

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

export function smtpMailer(url: string): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    async send(mail) {
      await transport.sendMail({
        from: mail.from,
        to: mail.to.map((r) => (r.name ? { name: r.name, address: r.email } : r.email)),
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      });
    },
    close: () => transport.close(),
  };
}
