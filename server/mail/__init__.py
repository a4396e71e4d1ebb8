"""Mail: one SMTP sender (aiosmtplib) and the background task that drains the outbox."""
