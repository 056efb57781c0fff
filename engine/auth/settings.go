package auth

import "svcd/engine"

// registerAuthSettings defines the settings of sign-in, sessions and
// passwords.
func (au *Auth) registerAuthSettings() {
	au.core.DefineSettings(engine.Defaults(
		"password.min_length", "12",
		"password.require_upper", "0",
		"password.require_lower", "0",
		"password.require_digit", "0",
		"password.require_symbol", "0",
		"password.hibp_check", "0",
		"password.hibp_url", "https://api.pwnedpasswords.com/range/",
		"auth.user.window_seconds", "604800",
		"auth.admin.window_seconds", "604800",
		"auth.file.window_seconds", "3600",
		"auth.refresh.window_seconds", "604800",
		"auth.lockout.max_attempts", "0",
		"auth.lockout.duration_seconds", "900",
		"auth.mfa.enabled", "1",
		"auth.webauthn.enabled", "1",
		"auth.impersonation.enabled", "1",
		"auth.otp.enabled", "0",
		"auth.anonymous.enabled", "0",
		"auth.email_change.ttl_seconds", "1800",
	)...)
}
