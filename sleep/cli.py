def main() -> int:
    raise SystemExit("skillopt-sleep: not built yet")
