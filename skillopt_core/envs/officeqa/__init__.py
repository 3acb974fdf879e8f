"""OfficeQA: grounded questions over parsed U.S. Treasury Bulletins, with an
offline tool mode (glob / read / grep over the parsed pages). Importing this
package registers the ``officeqa`` env."""

from skillopt_core.envs.officeqa.env import SAMPLE_PATH, OfficeQAEnv, read_questions
from skillopt_core.envs.officeqa.tools import Corpus, tool_calls

__all__ = ["SAMPLE_PATH", "Corpus", "OfficeQAEnv", "read_questions", "tool_calls"]
