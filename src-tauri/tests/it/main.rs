//! The desktop shell's own tests: what the webview may run and call.

mod lockdown;
