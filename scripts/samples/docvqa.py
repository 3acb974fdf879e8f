"""Write the bundled DocVQA sample (skillopt_core/envs/docvqa/data/): page
images the team drew with Pillow, each with the text it shows as an OCR
sidecar (<image>.txt), and docvqa_sample.csv in the layout SkillOpt's DocVQA
materialisation uses (questionId, question, answer as a Python-literal list,
image_path, docId, ucsf_document_id, ucsf_document_page_no, topic).

Needs Pillow (not a SkillOpt dependency). Run from the repository root:
    python scripts/samples/docvqa.py
"""

from __future__ import annotations

import csv
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

OUT = Path(__file__).resolve().parents[2] / "skillopt_core" / "envs" / "docvqa" / "data"

PAGES = {
    "d1001": ["ACME SUPPLY CO.", "INVOICE No. 4471", "Date: March 3, 1998", "Bill to: Harbor Labs",
              "Widgets (12)        $96.00", "Gaskets (40)        $64.00", "Shipping            $15.00",
              "TOTAL DUE           $175.00"],
    "d1002": ["MEMORANDUM", "To: All Research Staff", "From: Dr. Elena Ruiz", "Date: June 12, 2001",
              "Subject: Lab closure", "The east lab will close on", "Friday, June 22 for repairs."],
    "d1003": ["REGISTRATION FORM", "Name: Marcus Bell", "Phone: 555-0142", "City: Dayton",
              "Course: Statistics II", "Fee paid: Yes"],
    "d1004": ["CORNER CAFE", "Receipt #2291", "Latte            3.50", "Bagel            2.25",
              "Tax              0.46", "Total            6.21", "Thank you!"],
    "d1005": ["QUARTERLY SHIPMENTS", "Quarter   Units", "Q1        1,240", "Q2        1,515",
              "Q3          980", "Q4        1,870"],
    "d1006": ["Greenfield Foundation", "April 9, 1995", "Dear Ms. Okafor,",
              "We are pleased to award your", "project a grant of $25,000.", "Sincerely,", "Thomas Reed, Director"],
}

QUESTIONS = [
    ("50001", "d1001", "What is the invoice number?", ["4471"], "form"),
    ("50002", "d1001", "What is the total amount due?", ["$175.00", "175.00"], "table/list"),
    ("50003", "d1001", "Who is the invoice billed to?", ["Harbor Labs"], "form"),
    ("50004", "d1002", "Who sent the memo?", ["Dr. Elena Ruiz", "Elena Ruiz"], "layout"),
    ("50005", "d1002", "On which day will the east lab close?", ["Friday, June 22", "June 22"], "free_text"),
    ("50006", "d1003", "What is the phone number on the form?", ["555-0142"], "form"),
    ("50007", "d1003", "Which course is the registration for?", ["Statistics II"], "form"),
    ("50008", "d1004", "What is the receipt number?", ["2291", "#2291"], "layout"),
    ("50009", "d1004", "How much did the latte cost?", ["3.50"], "table/list"),
    ("50010", "d1005", "How many units were shipped in Q4?", ["1,870", "1870"], "table/list"),
    ("50011", "d1005", "Which quarter had the fewest units?", ["Q3"], "table/list"),
    ("50012", "d1006", "How large is the grant?", ["$25,000", "25,000"], "free_text"),
    ("50013", "d1006", "Who signed the letter?", ["Thomas Reed"], "layout"),
    ("50014", "d1002", "What is the subject of the memo?", ["Lab closure"], "layout"),
]


def draw(lines: list[str], path: Path) -> None:
    font = ImageFont.load_default(size=22)
    image = Image.new("L", (520, 60 + 36 * len(lines)), color=255)
    pen = ImageDraw.Draw(image)
    for n, line in enumerate(lines):
        pen.text((30, 30 + 36 * n), line, fill=0, font=font)
    image.save(path, optimize=True)


def main() -> None:
    for doc, lines in PAGES.items():
        png = OUT / "images" / f"{doc}_p1.png"
        draw(lines, png)
        png.with_suffix(".txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with (OUT / "docvqa_sample.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["questionId", "question", "answer", "image_path", "docId", "ucsf_document_id",
                         "ucsf_document_page_no", "topic"])
        for qid, doc, question, answers, topic in QUESTIONS:
            writer.writerow([qid, question, repr(answers), f"images/{doc}_p1.png", doc[1:], f"team{doc[1:]}",
                             "1", topic])
    print(f"wrote {len(PAGES)} pages and {len(QUESTIONS)} questions to {OUT}")


if __name__ == "__main__":
    main()
