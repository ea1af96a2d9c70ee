"""Text a person reads, in their language: one message catalog (gettext, Korean from a .po file) and dates by Babel."""
